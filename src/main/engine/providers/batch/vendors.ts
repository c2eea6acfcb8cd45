// The two vendors' batch endpoints, as Pacer speaks to them: submit a set of request lines, read
// the batch's status and counts, fetch its results as answers keyed by custom_id, cancel it.
// OpenAI: platform.openai.com/docs/api-reference/batch (files purpose "batch", /v1/batches).
// Anthropic: docs.claude.com/en/api/creating-message-batches (/v1/messages/batches).
import type { LineAnswer, Vendor } from './journal'

/** One request as it goes into a batch: its custom_id and the live endpoint's JSON body. */
export interface BatchRequest {
  customId: string
  /** The request body exactly as the live call would have sent it (JSON text). */
  body: string
}

/** A batch's state as the vendor reports it, in Pacer's words. */
export interface RemoteStatus {
  /** The vendor's own status word (validating, in_progress, ended, ...). */
  status: string
  /** Results can be fetched: nothing more will change. */
  ended: boolean
  /** The counts the vendor reports, as it names them. */
  counts: Record<string, number>
  /** OpenAI: the validation errors of a failed batch. */
  error: string | null
  /** Where the results are (OpenAI: file ids; Anthropic: results_url). */
  outputs: string[]
}

/** An answer from a batch endpoint that is not a success: its status and what the vendor said. */
export class BatchHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly url: string,
  ) {
    super(message)
  }
}

export interface VendorLink {
  /** The live endpoint's URL the calls were meant for (…/chat/completions, …/v1/messages). */
  endpoint: string
  /** The headers of the live calls (the key among them), reused for the batch endpoints. */
  headers: Record<string, string>
  fetch: typeof fetch
  signal?: AbortSignal
}

export interface VendorApi {
  vendor: Vendor
  submit(link: VendorLink, lines: readonly BatchRequest[], tag: string): Promise<Accepted>
  status(link: VendorLink, remoteId: string): Promise<RemoteStatus>
  results(link: VendorLink, status: RemoteStatus): Promise<LineAnswer[]>
  cancel(link: VendorLink, remoteId: string): Promise<RemoteStatus>
  /**
   * The batch a submission created, found again by its tag (a process killed between the vendor
   * accepting it and its id being journaled); null when there is none. Absent: the vendor keeps
   * nothing a batch could be found by (Anthropic's message batches carry no metadata).
   */
  find?(link: VendorLink, tag: string, since: number): Promise<Accepted | null>
}

/** A batch the vendor accepted: its id, its input file (OpenAI) and its status then. */
export interface Accepted {
  remoteId: string
  inputFile: string | null
  status: string
}

/** Pages of GET /v1/batches looked through for a lost submission: 20 × 100, newest first. */
const FIND_PAGES = 20
/** Clock skew allowed between this machine and the vendor when telling a batch too old. */
const FIND_SKEW_MS = 10 * 60_000

/** The JSON text of one line a request of the given size takes in the vendor's input. */
export function lineBytes(vendor: Vendor, r: BatchRequest): number {
  // {"custom_id":"…","method":"POST","url":"/v1/chat/completions","body":…} or {"custom_id":"…","params":…}
  const frame = vendor === 'openai' ? 70 : 30
  return Buffer.byteLength(r.body) + r.customId.length + frame
}

async function call(
  link: VendorLink,
  url: string,
  init: { method: string; body?: RequestInit['body']; json?: boolean },
): Promise<Response> {
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(link.headers)) {
    if (k.toLowerCase() !== 'content-type' && k.toLowerCase() !== 'content-length') headers[k] = v
  }
  if (init.json) headers['content-type'] = 'application/json'
  const res = await link.fetch(url, {
    method: init.method,
    headers,
    body: init.body,
    signal: link.signal,
  })
  if (!res.ok) {
    const text = await res.text().catch(() => '')
    let said = text.slice(0, 300)
    try {
      const j = JSON.parse(text) as { error?: { message?: string } }
      if (typeof j.error?.message === 'string') said = j.error.message
    } catch {
      // not JSON: the excerpt
    }
    throw new BatchHttpError(
      res.status,
      `${init.method} ${url}: HTTP ${res.status}${said ? `: ${said}` : ''}`,
      url,
    )
  }
  return res
}

async function json(
  link: VendorLink,
  url: string,
  init: { method: string; body?: RequestInit['body']; json?: boolean },
) {
  return (await (await call(link, url, init)).json()) as Record<string, unknown>
}

function numbers(v: unknown): Record<string, number> {
  const out: Record<string, number> = {}
  if (v !== null && typeof v === 'object') {
    for (const [k, n] of Object.entries(v)) if (typeof n === 'number') out[k] = n
  }
  return out
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

/** The endpoint's root: …/v1 of …/v1/chat/completions. */
function openAiRoot(endpoint: string): string {
  return endpoint.replace(/\/chat\/completions$/, '')
}

const OPENAI_ENDED = new Set(['completed', 'failed', 'expired', 'cancelled'])

function openAiStatus(b: Record<string, unknown>): RemoteStatus {
  const status = String(b['status'])
  const errors = (
    b['errors'] as { data?: { code?: string; message?: string; line?: number | null }[] } | null
  )?.data
  const error =
    errors && errors.length > 0
      ? errors
          .slice(0, 3)
          .map(
            (e) => `${e.code ?? 'error'}${e.line ? ` (line ${e.line})` : ''}: ${e.message ?? ''}`,
          )
          .join('; ')
      : null
  const outputs = [b['output_file_id'], b['error_file_id']].filter(
    (x): x is string => typeof x === 'string',
  )
  return {
    status,
    ended: OPENAI_ENDED.has(status),
    counts: numbers(b['request_counts']),
    error,
    outputs,
  }
}

export const openAiBatches: VendorApi = {
  vendor: 'openai',
  async submit(link, lines, tag) {
    const root = openAiRoot(link.endpoint)
    const path = new URL(link.endpoint).pathname.replace(/^.*?(\/v1\/)/, '/v1/')
    const jsonl =
      lines
        .map(
          (l) =>
            `{"custom_id":${JSON.stringify(l.customId)},"method":"POST","url":${JSON.stringify(path)},"body":${l.body}}`,
        )
        .join('\n') + '\n'
    const form = new FormData()
    form.set('purpose', 'batch')
    form.set('file', new Blob([jsonl], { type: 'application/jsonl' }), `pacer-${tag}.jsonl`)
    const file = await json(link, `${root}/files`, { method: 'POST', body: form })
    const fileId = String(file['id'])
    const b = await json(link, `${root}/batches`, {
      method: 'POST',
      json: true,
      body: JSON.stringify({
        input_file_id: fileId,
        endpoint: path,
        completion_window: '24h',
        metadata: { pacer_submission: tag },
      }),
    })
    return { remoteId: String(b['id']), inputFile: fileId, status: String(b['status']) }
  },
  async status(link, remoteId) {
    return openAiStatus(
      await json(link, `${openAiRoot(link.endpoint)}/batches/${remoteId}`, { method: 'GET' }),
    )
  },
  async results(link, status) {
    const root = openAiRoot(link.endpoint)
    const out: LineAnswer[] = []
    for (const fileId of status.outputs) {
      const text = await (
        await call(link, `${root}/files/${fileId}/content`, { method: 'GET' })
      ).text()
      for (const line of jsonLines(text)) {
        const customId = String(line['custom_id'])
        const response = line['response'] as { status_code?: number; body?: unknown } | null
        const error = line['error'] as { code?: string; message?: string } | null
        if (response && typeof response.status_code === 'number') {
          const ok = response.status_code >= 200 && response.status_code < 300
          out.push({
            customId,
            state: ok ? 'succeeded' : 'errored',
            status: response.status_code,
            body: JSON.stringify(response.body ?? {}),
          })
        } else {
          const code = error?.code ?? 'batch_error'
          const state =
            code === 'batch_expired'
              ? 'expired'
              : code === 'batch_cancelled'
                ? 'canceled'
                : 'errored'
          out.push({
            customId,
            state,
            status: state === 'errored' ? 500 : 410,
            body: JSON.stringify({ error: { message: error?.message ?? code, code } }),
          })
        }
      }
    }
    return out
  },
  async cancel(link, remoteId) {
    return openAiStatus(
      await json(link, `${openAiRoot(link.endpoint)}/batches/${remoteId}/cancel`, {
        method: 'POST',
      }),
    )
  },
  // GET /v1/batches lists newest first with cursor paging (limit ≤ 100, after = last_id): read
  // until the tag's batch, a batch created before the submission began, or the last page.
  async find(link, tag, since) {
    const root = openAiRoot(link.endpoint)
    let after: string | null = null
    for (let page = 0; page < FIND_PAGES; page++) {
      const q = `limit=100${after === null ? '' : `&after=${encodeURIComponent(after)}`}`
      const list = await json(link, `${root}/batches?${q}`, { method: 'GET' })
      const data = (Array.isArray(list['data']) ? list['data'] : []) as Record<string, unknown>[]
      for (const b of data) {
        const meta = b['metadata'] as Record<string, unknown> | null | undefined
        if (meta?.['pacer_submission'] === tag) {
          return {
            remoteId: String(b['id']),
            inputFile: typeof b['input_file_id'] === 'string' ? b['input_file_id'] : null,
            status: String(b['status']),
          }
        }
      }
      // Older than the submission (by the vendor's clock, allowing for skew): not there.
      const oldest = data.at(-1)?.['created_at']
      if (typeof oldest === 'number' && oldest * 1000 < since - FIND_SKEW_MS) return null
      if (list['has_more'] !== true || typeof list['last_id'] !== 'string') return null
      after = list['last_id']
    }
    return null
  },
}

/** …/v1/messages → …/v1/messages/batches. */
function anthropicBatches(endpoint: string): string {
  return `${endpoint}/batches`
}

function anthropicStatus(b: Record<string, unknown>): RemoteStatus {
  const status = String(b['processing_status'])
  const url = b['results_url']
  return {
    status,
    ended: status === 'ended',
    counts: numbers(b['request_counts']),
    error: null,
    outputs: typeof url === 'string' ? [url] : [],
  }
}

/** Anthropic's error types as the HTTP statuses its live endpoint answers them with. */
const ANTHROPIC_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
}

export const anthropicMessageBatches: VendorApi = {
  vendor: 'anthropic',
  async submit(link, lines) {
    const body = `{"requests":[${lines.map((l) => `{"custom_id":${JSON.stringify(l.customId)},"params":${l.body}}`).join(',')}]}`
    const b = await json(link, anthropicBatches(link.endpoint), {
      method: 'POST',
      json: true,
      body,
    })
    return { remoteId: String(b['id']), inputFile: null, status: String(b['processing_status']) }
  },
  async status(link, remoteId) {
    return anthropicStatus(
      await json(link, `${anthropicBatches(link.endpoint)}/${remoteId}`, { method: 'GET' }),
    )
  },
  async results(link, status) {
    const out: LineAnswer[] = []
    for (const url of status.outputs) {
      const text = await (await call(link, url, { method: 'GET' })).text()
      for (const line of jsonLines(text)) {
        const customId = String(line['custom_id'])
        const result = (line['result'] ?? {}) as {
          type?: string
          message?: unknown
          error?: unknown
        }
        if (result.type === 'succeeded') {
          out.push({
            customId,
            state: 'succeeded',
            status: 200,
            body: JSON.stringify(result.message),
          })
        } else if (result.type === 'errored') {
          const inner = (result.error as { error?: { type?: string } } | undefined)?.error
          const status = ANTHROPIC_STATUS[inner?.type ?? ''] ?? 500
          out.push({ customId, state: 'errored', status, body: JSON.stringify(result.error ?? {}) })
        } else {
          const state = result.type === 'canceled' ? 'canceled' : 'expired'
          const message = `the message batch ${state === 'canceled' ? 'was canceled' : 'expired'} before this request ran`
          out.push({
            customId,
            state,
            status: 410,
            body: JSON.stringify({ type: 'error', error: { type: `batch_${state}`, message } }),
          })
        }
      }
    }
    return out
  },
  async cancel(link, remoteId) {
    return anthropicStatus(
      await json(link, `${anthropicBatches(link.endpoint)}/${remoteId}/cancel`, { method: 'POST' }),
    )
  },
}

export const VENDORS: Record<Vendor, VendorApi> = {
  openai: openAiBatches,
  anthropic: anthropicMessageBatches,
}

/** Which vendor's batch API a live endpoint's calls go through; null: not a batchable endpoint. */
export function vendorOf(url: string): Vendor | null {
  const path = url.split('?')[0]!
  if (path.endsWith('/chat/completions')) return 'openai'
  if (path.endsWith('/v1/messages')) return 'anthropic'
  return null
}
