// OpenAI's Batch API as a double (platform.openai.com/docs/guides/batch, api-reference/batch):
// files uploaded with purpose "batch" as JSONL lines {custom_id, method, url, body}; a batch over
// one file and one endpoint, completion_window "24h"; statuses validating → in_progress →
// finalizing → completed, or failed (validation), expired, cancelling → cancelled; request_counts
// live; an output file of the 2xx lines and an error file of the others, in any order.
import type { Clock } from '../../../src/main/engine/core/types'
import { Timeline, type TimelineOptions } from './timeline'

/** OpenAI's documented limits for one batch (guides/batch, "Rate limits"). */
export const OPENAI_LIMITS = { requests: 50_000, bytes: 200 * 1024 * 1024 } as const

const ENDPOINTS = new Set([
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/embeddings',
  '/v1/completions',
])

export class VendorError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(JSON.stringify(body))
  }
}

function openAiError(status: number, message: string, code: string | null = null): VendorError {
  return new VendorError(status, {
    error: { message, type: 'invalid_request_error', param: null, code },
  })
}

interface StoredFile {
  id: string
  purpose: string
  filename: string
  bytes: number
  content: string
  createdAt: number
}

interface OpenAiBatch {
  id: string
  endpoint: string
  inputFileId: string
  createdAt: number
  metadata: Record<string, string> | null
  /** Null: validation failed (status failed). */
  timeline: Timeline | null
  errors: { code: string; message: string; line: number | null }[]
  total: number
  outputFileId: string | null
  errorFileId: string | null
}

export class OpenAiBatchDouble {
  readonly files = new Map<string, StoredFile>()
  readonly batches = new Map<string, OpenAiBatch>()
  /** Every custom_id of every batch created, in order: what was submitted, duplicates kept. */
  readonly submitted: string[] = []
  #n = 0

  constructor(
    readonly clock: Clock,
    readonly options: TimelineOptions = {},
  ) {}

  #id(prefix: string): string {
    return `${prefix}_${(++this.#n).toString(36).padStart(6, '0')}`
  }

  /** POST /v1/files. A batch file larger than 200 MB is refused at upload. */
  uploadFile(purpose: string, filename: string, content: string): Record<string, unknown> {
    if (purpose !== 'batch') return this.#storeFile(purpose, filename, content)
    const bytes = Buffer.byteLength(content)
    if (bytes > OPENAI_LIMITS.bytes) {
      throw openAiError(
        400,
        `File is too large (${bytes} bytes). The maximum size for a batch input file is 200 MB.`,
        'file_too_large',
      )
    }
    return this.#storeFile(purpose, filename, content)
  }

  #storeFile(purpose: string, filename: string, content: string): Record<string, unknown> {
    const file: StoredFile = {
      id: this.#id('file'),
      purpose,
      filename,
      bytes: Buffer.byteLength(content),
      content,
      createdAt: this.clock.now(),
    }
    this.files.set(file.id, file)
    return this.#fileJson(file)
  }

  #fileJson(f: StoredFile): Record<string, unknown> {
    return {
      id: f.id,
      object: 'file',
      bytes: f.bytes,
      created_at: Math.floor(f.createdAt / 1000),
      filename: f.filename,
      purpose: f.purpose,
    }
  }

  fileContent(id: string): string {
    const f = this.files.get(id)
    if (!f) throw openAiError(404, `No such File object: ${id}`)
    return f.content
  }

  /** POST /v1/batches: created validating; the input is checked as the vendor checks it. */
  createBatch(body: Record<string, unknown>): Record<string, unknown> {
    const { input_file_id: fileId, endpoint, completion_window: window } = body
    if (typeof endpoint !== 'string' || !ENDPOINTS.has(endpoint)) {
      throw openAiError(400, `Invalid endpoint: ${String(endpoint)}`)
    }
    if (window !== '24h') throw openAiError(400, `Invalid completion_window: ${String(window)}`)
    if (typeof fileId !== 'string') throw openAiError(400, 'Missing input_file_id')
    const file = this.files.get(fileId)
    if (!file) throw openAiError(400, `No such File object: ${fileId}`)
    if (file.purpose !== 'batch')
      throw openAiError(400, `File ${fileId} has purpose ${file.purpose}`)
    const batch: OpenAiBatch = {
      id: this.#id('batch'),
      endpoint,
      inputFileId: fileId,
      createdAt: this.clock.now(),
      metadata: (body['metadata'] as Record<string, string> | undefined) ?? null,
      timeline: null,
      errors: [],
      total: 0,
      outputFileId: null,
      errorFileId: null,
    }
    const requests = this.#validate(file.content, endpoint, batch.errors)
    if (batch.errors.length === 0) {
      batch.timeline = new Timeline(this.clock, requests, this.options)
      batch.total = requests.length
      for (const r of requests) this.submitted.push(r.customId)
    }
    this.batches.set(batch.id, batch)
    return this.batchJson(batch.id)
  }

  /** The input's checks: one line per request, unique custom_ids, one endpoint, one model. */
  #validate(
    content: string,
    endpoint: string,
    errors: OpenAiBatch['errors'],
  ): { customId: string; body: Record<string, unknown> }[] {
    const lines = content.split('\n').filter((l) => l.trim() !== '')
    if (lines.length > OPENAI_LIMITS.requests) {
      errors.push({
        code: 'too_many_requests',
        message: `The batch input file contains ${lines.length} requests; the maximum is ${OPENAI_LIMITS.requests}.`,
        line: null,
      })
      return []
    }
    const seen = new Set<string>()
    const models = new Set<string>()
    const out: { customId: string; body: Record<string, unknown> }[] = []
    lines.forEach((text, i) => {
      let line: Record<string, unknown>
      try {
        line = JSON.parse(text) as Record<string, unknown>
      } catch {
        errors.push({ code: 'invalid_json_line', message: 'Invalid JSON', line: i + 1 })
        return
      }
      const id = line['custom_id']
      if (typeof id !== 'string' || id === '') {
        errors.push({ code: 'missing_required_parameter', message: 'custom_id', line: i + 1 })
        return
      }
      if (seen.has(id)) {
        errors.push({
          code: 'duplicate_custom_id',
          message: `Duplicate custom_id ${id}`,
          line: i + 1,
        })
        return
      }
      seen.add(id)
      if (line['method'] !== 'POST' || line['url'] !== endpoint) {
        errors.push({
          code: 'mismatched_endpoint',
          message: `url must be ${endpoint}`,
          line: i + 1,
        })
        return
      }
      const body = line['body'] as Record<string, unknown>
      models.add(String(body['model']))
      out.push({ customId: id, body })
    })
    if (models.size > 1) {
      errors.push({
        code: 'mismatched_model',
        message: 'All requests must use one model',
        line: null,
      })
    }
    return errors.length > 0 ? [] : out
  }

  /** GET /v1/batches/{id}, as the clock says it stands now. */
  batchJson(id: string): Record<string, unknown> {
    const b = this.batches.get(id)
    if (!b) throw openAiError(404, `No batch found with id '${id}'.`)
    const created = Math.floor(b.createdAt / 1000)
    const base = {
      id: b.id,
      object: 'batch',
      endpoint: b.endpoint,
      input_file_id: b.inputFileId,
      completion_window: '24h',
      created_at: created,
      expires_at: created + 86_400,
      metadata: b.metadata,
    }
    if (!b.timeline) {
      return {
        ...base,
        status: 'failed',
        errors: { object: 'list', data: b.errors },
        failed_at: created,
        output_file_id: null,
        error_file_id: null,
        request_counts: { total: 0, completed: 0, failed: 0 },
      }
    }
    const s = b.timeline.snapshot()
    let status: string = s.phase
    if (s.phase === 'ended') {
      status = s.end === 'cancelled' ? 'cancelled' : s.end === 'expired' ? 'expired' : 'completed'
      this.#writeResults(b)
    }
    const ended = s.endedAt === null ? null : Math.floor(s.endedAt / 1000)
    return {
      ...base,
      status,
      errors: null,
      output_file_id: b.outputFileId,
      error_file_id: b.errorFileId,
      completed_at: status === 'completed' ? ended : null,
      expired_at: status === 'expired' ? ended : null,
      cancelled_at: status === 'cancelled' ? ended : null,
      request_counts: { total: b.total, completed: s.succeeded, failed: s.errored },
    }
  }

  /** The output and error files, written once at the end; lines in the order they finished. */
  #writeResults(b: OpenAiBatch): void {
    if (b.outputFileId !== null || b.errorFileId !== null || !b.timeline) return
    const out: string[] = []
    const err: string[] = []
    for (const line of b.timeline.lines) {
      const end = b.timeline.lineEnd(line)
      const requestId = `req_${line.customId.slice(0, 12)}`
      if (end === 'succeeded') {
        const a = line.answer
        const body = {
          id: `chatcmpl-${line.customId.slice(0, 10)}`,
          object: 'chat.completion',
          model: line.body['model'],
          choices: [
            { index: 0, message: { role: 'assistant', content: a.text }, finish_reason: 'stop' },
          ],
          usage: {
            prompt_tokens: a.inputTokens,
            completion_tokens: a.outputTokens,
            total_tokens: a.inputTokens + a.outputTokens,
          },
        }
        out.push(
          JSON.stringify({
            id: `batch_req_${line.customId.slice(0, 8)}`,
            custom_id: line.customId,
            response: { status_code: 200, request_id: requestId, body },
            error: null,
          }),
        )
      } else if (end === 'errored') {
        err.push(
          JSON.stringify({
            id: `batch_req_${line.customId.slice(0, 8)}`,
            custom_id: line.customId,
            response: {
              status_code: 400,
              request_id: requestId,
              body: {
                error: {
                  message: 'double: this request is invalid',
                  type: 'invalid_request_error',
                  param: null,
                  code: null,
                },
              },
            },
            error: null,
          }),
        )
      } else {
        const code = end === 'canceled' ? 'batch_cancelled' : 'batch_expired'
        err.push(
          JSON.stringify({
            id: `batch_req_${line.customId.slice(0, 8)}`,
            custom_id: line.customId,
            response: null,
            error: {
              code,
              message: `This request could not be executed before the batch was ${end === 'canceled' ? 'cancelled' : 'expired'}.`,
            },
          }),
        )
      }
    }
    if (out.length > 0)
      b.outputFileId = this.#storeFile(
        'batch_output',
        `${b.id}_output.jsonl`,
        out.join('\n') + '\n',
      )['id'] as string
    if (err.length > 0)
      b.errorFileId = this.#storeFile('batch_output', `${b.id}_error.jsonl`, err.join('\n') + '\n')[
        'id'
      ] as string
  }

  /** POST /v1/batches/{id}/cancel: cancelling now, cancelled when the vendor has stopped. */
  cancelBatch(id: string): Record<string, unknown> {
    const b = this.batches.get(id)
    if (!b) throw openAiError(404, `No batch found with id '${id}'.`)
    if (!b.timeline || !b.timeline.cancel()) {
      throw openAiError(
        409,
        `Cannot cancel a batch with status ${String(this.batchJson(id)['status'])}.`,
      )
    }
    return this.batchJson(id)
  }

  /**
   * GET /v1/batches?limit=&after=: newest first, a page of `limit` (1-100, default 20) after the
   * cursor `after` (a batch id), with first_id, last_id and has_more as the vendor pages them.
   */
  list(query: URLSearchParams = new URLSearchParams()): Record<string, unknown> {
    const raw = query.get('limit')
    const limit = raw === null ? 20 : Number(raw)
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw openAiError(400, `Invalid 'limit': integer between 1 and 100 expected, got ${raw}`)
    }
    const ids = [...this.batches.keys()].reverse()
    const after = query.get('after')
    const start = after === null ? 0 : ids.indexOf(after) + 1
    if (after !== null && start === 0) throw openAiError(404, `No batch found with id '${after}'.`)
    const page = ids.slice(start, start + limit)
    const data = page.map((id) => this.batchJson(id))
    return {
      object: 'list',
      data,
      first_id: page[0] ?? null,
      last_id: page.at(-1) ?? null,
      has_more: start + limit < ids.length,
    }
  }
}
