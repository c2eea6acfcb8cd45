// Anthropic's Message Batches as a double (docs.claude.com/en/docs/build-with-claude/batch-processing,
// api/creating-message-batches): POST /v1/messages/batches {requests: [{custom_id, params}]};
// processing_status in_progress → canceling → ended; request_counts succeeded/errored/canceled/
// expired stay 0 until the batch has ended; results_url streams one JSONL line per request in
// any order: succeeded with the message, errored with the error, canceled, expired.
import type { Clock } from '../../../src/main/engine/core/types'
import { VendorError } from './openai'
import { Timeline, type TimelineOptions } from './timeline'

/** Anthropic's documented limits for one batch: 100,000 requests or 256 MB, whichever first. */
export const ANTHROPIC_LIMITS = { requests: 100_000, bytes: 256 * 1024 * 1024 } as const

export const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/

function anthropicError(status: number, type: string, message: string): VendorError {
  return new VendorError(status, { type: 'error', error: { type, message } })
}

interface MessageBatch {
  id: string
  timeline: Timeline
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString()
}

export class AnthropicBatchDouble {
  readonly batches = new Map<string, MessageBatch>()
  readonly submitted: string[] = []
  #n = 0

  constructor(
    readonly clock: Clock,
    readonly options: TimelineOptions = {},
  ) {}

  /** POST /v1/messages/batches; `bytes` is the request body's size as received. */
  create(body: Record<string, unknown>, bytes: number): Record<string, unknown> {
    if (bytes > ANTHROPIC_LIMITS.bytes) {
      throw anthropicError(
        413,
        'request_too_large',
        'Request exceeds the maximum allowed number of bytes.',
      )
    }
    const requests = body['requests']
    if (!Array.isArray(requests) || requests.length === 0) {
      throw anthropicError(400, 'invalid_request_error', 'requests: Field required')
    }
    if (requests.length > ANTHROPIC_LIMITS.requests) {
      throw anthropicError(
        400,
        'invalid_request_error',
        `requests: A batch may contain at most ${ANTHROPIC_LIMITS.requests} requests, got ${requests.length}`,
      )
    }
    const seen = new Set<string>()
    const parsed: { customId: string; body: Record<string, unknown> }[] = []
    requests.forEach((r: unknown, i) => {
      const id = (r as { custom_id?: unknown }).custom_id
      if (typeof id !== 'string' || !CUSTOM_ID.test(id)) {
        throw anthropicError(
          400,
          'invalid_request_error',
          `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`,
        )
      }
      if (seen.has(id)) {
        throw anthropicError(
          400,
          'invalid_request_error',
          `requests.${i}.custom_id: Duplicate custom_id ${id}`,
        )
      }
      seen.add(id)
      const params = (r as { params?: unknown }).params
      if (params === null || typeof params !== 'object') {
        throw anthropicError(400, 'invalid_request_error', `requests.${i}.params: Field required`)
      }
      parsed.push({ customId: id, body: params as Record<string, unknown> })
    })
    const id = `msgbatch_${(++this.#n).toString(36).padStart(8, '0')}`
    this.batches.set(id, { id, timeline: new Timeline(this.clock, parsed, this.options) })
    for (const r of parsed) this.submitted.push(r.customId)
    return this.batchJson(id, '')
  }

  #get(id: string): MessageBatch {
    const b = this.batches.get(id)
    if (!b) throw anthropicError(404, 'not_found_error', `Message batch ${id} not found`)
    return b
  }

  /** GET /v1/messages/batches/{id}; `baseUrl` makes results_url absolute, as the vendor's is. */
  batchJson(id: string, baseUrl: string): Record<string, unknown> {
    const b = this.#get(id)
    const t = b.timeline
    const s = t.snapshot()
    const ended = s.phase === 'ended'
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 }
    if (!ended) {
      // The vendor reports only what is still processing until the end.
      counts.processing = t.lines.length
    } else {
      for (const l of t.lines) {
        const end = t.lineEnd(l)
        if (end !== 'pending') counts[end]++
      }
    }
    return {
      id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : s.phase === 'cancelling' ? 'canceling' : 'in_progress',
      request_counts: counts,
      ended_at: iso(s.endedAt),
      created_at: iso(t.createdAt),
      expires_at: iso(t.expiresAt),
      cancel_initiated_at: iso(t.cancelAt),
      archived_at: null,
      results_url: ended ? `${baseUrl}/v1/messages/batches/${id}/results` : null,
    }
  }

  /** POST /v1/messages/batches/{id}/cancel. */
  cancel(id: string, baseUrl: string): Record<string, unknown> {
    const b = this.#get(id)
    if (!b.timeline.cancel()) {
      throw anthropicError(400, 'invalid_request_error', `Message batch ${id} has already ended`)
    }
    return this.batchJson(id, baseUrl)
  }

  /** GET results_url: only once ended; lines in the order they finished. */
  results(id: string): string {
    const t = this.#get(id).timeline
    if (t.snapshot().phase !== 'ended') {
      throw anthropicError(400, 'invalid_request_error', `Message batch ${id} has not ended yet`)
    }
    const lines = t.lines.map((l) => {
      const end = t.lineEnd(l)
      let result: Record<string, unknown>
      if (end === 'succeeded') {
        result = {
          type: 'succeeded',
          message: {
            id: `msg_${l.customId.slice(0, 12)}`,
            type: 'message',
            role: 'assistant',
            model: l.body['model'],
            content: [{ type: 'text', text: l.answer.text }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: {
              input_tokens: l.answer.inputTokens,
              output_tokens: l.answer.outputTokens,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 0,
            },
          },
        }
      } else if (end === 'errored') {
        result = {
          type: 'errored',
          error: {
            type: 'error',
            error: { type: 'invalid_request_error', message: 'double: this request is invalid' },
          },
        }
      } else {
        result = { type: end === 'canceled' ? 'canceled' : 'expired' }
      }
      return JSON.stringify({ custom_id: l.customId, result })
    })
    return lines.join('\n') + '\n'
  }

  /** GET /v1/messages/batches: newest first. */
  list(baseUrl: string): Record<string, unknown> {
    const data = [...this.batches.keys()].reverse().map((id) => this.batchJson(id, baseUrl))
    return { data, has_more: false, first_id: data[0]?.['id'] ?? null, last_id: null }
  }
}
