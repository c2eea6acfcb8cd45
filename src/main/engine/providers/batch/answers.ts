// The answers the batch path hands back in place of the live endpoint's: a line's answer, a
// submission's refusal, the lines a batch did not run; and a submission as the CLI shows it.
import { createHash } from 'node:crypto'
import type { ProviderBatchSummary } from '../../../../shared/contract'
import type { JournalLine, LineAnswer, Submission, Vendor } from './journal'
import { BatchHttpError, type RemoteStatus } from './vendors'
import { BATCH_API_UNSUPPORTED, BATCH_ID_HEADER, VIA_BATCH, VIA_HEADER } from './constants'

/** A remote batch's state, as the CLI shows it (the console counts the wait itself). */
export interface ProviderBatchView extends ProviderBatchSummary {
  /** How long it has been waiting (till its end, once ended). */
  waitingMs: number
  batchId: string | null
}

/** The model a request body names; null when the body is not JSON. */
export function modelOf(body: string): string | null {
  try {
    return String((JSON.parse(body) as { model?: unknown }).model ?? '')
  } catch {
    return null
  }
}

/** The custom_id of a request: its hash (Anthropic allows ^[a-zA-Z0-9_-]{1,64}$). */
export function customIdOf(endpoint: string, body: string): string {
  return `pcr_${createHash('sha256').update(`${endpoint}\n${body}`).digest('hex').slice(0, 48)}`
}

export function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  new Headers(init?.headers).forEach((v, k) => (out[k] = v))
  return out
}

export /** What a line stands for, as the live endpoint's answer. */
function responseOf(line: JournalLine, remoteId: string | null): Response {
  return new Response(line.body ?? '{}', {
    status: line.status ?? 500,
    headers: {
      'content-type': 'application/json',
      [VIA_HEADER]: VIA_BATCH,
      ...(remoteId ? { [BATCH_ID_HEADER]: remoteId } : {}),
    },
  })
}

function errorBody(vendor: Vendor, type: string, message: string): string {
  return JSON.stringify(
    vendor === 'anthropic'
      ? { type: 'error', error: { type, message } }
      : { error: { message, type, code: type } },
  )
}

/** Why a submission was refused, as every one of its calls will be told. */
export function refusal(
  g: { vendor: Vendor; endpoint: string },
  err: unknown,
): Omit<LineAnswer, 'customId'> & { message: string } {
  const status = err instanceof BatchHttpError ? err.status : 502
  const url = err instanceof BatchHttpError ? err.url : g.endpoint
  if (status === 404) {
    const message = `the server has no batch endpoints (${url} answered 404)`
    const body = errorBody(g.vendor, BATCH_API_UNSUPPORTED, message)
    return { state: 'errored', status: 404, body, message }
  }
  const message = `the provider batch was not accepted: ${(err as Error).message}`
  return {
    state: 'errored',
    status,
    body: errorBody(g.vendor, 'batch_refused', message),
    message,
  }
}

/** The answer of a line the results did not include: expired, canceled, or the batch's failure. */
export function unanswered(s: Submission, status: RemoteStatus): Omit<LineAnswer, 'customId'> {
  const word = status.status
  const state = /cancel/.test(word) ? 'canceled' : word === 'failed' ? 'errored' : 'expired'
  const message =
    state === 'errored'
      ? `the provider batch failed: ${status.error ?? 'no reason given'}`
      : `the provider batch ${state === 'canceled' ? 'was cancelled' : 'expired'} before this request ran (run again with --retry-failed to submit it again)`
  return {
    state,
    status: state === 'errored' ? 400 : 410,
    body: errorBody(s.vendor, state === 'errored' ? 'batch_failed' : `batch_${state}`, message),
  }
}

export function toView(s: Submission, now: number): ProviderBatchView {
  return { ...toSummary(s), waitingMs: (s.endedAt ?? now) - s.createdAt, batchId: s.batchId }
}

/** A submission as the console's Queue view shows it, under its batch. */
export function toSummary(s: Submission): ProviderBatchSummary {
  return {
    id: s.id,
    vendor: s.vendor,
    model: s.model,
    remoteId: s.remoteId,
    status: s.status,
    ended: s.ended,
    requests: s.requests,
    counts: s.counts,
    createdAt: s.createdAt,
    endedAt: s.endedAt,
    error: s.error,
  }
}
