// Both batch doubles behind one loopback HTTP server, as the vendors serve them: OpenAI's under
// /v1/files and /v1/batches (the base URL is SERVER/v1), Anthropic's under /v1/messages/batches
// (the base URL is SERVER). A server without batch endpoints (`batchEndpoints: false`) answers
// 404 there, as an OpenAI-compatible server that lacks them does.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Clock } from '../../../src/main/engine/core/types'
import { FakeClock } from '../clock'
import { AnthropicBatchDouble } from './anthropic'
import { batchCostMicros, type ListPrice } from './answers'
import { OpenAiBatchDouble, VendorError } from './openai'
import type { TimelineOptions } from './timeline'

export { ANTHROPIC_LIMITS, AnthropicBatchDouble, CUSTOM_ID } from './anthropic'
export { OPENAI_LIMITS, OpenAiBatchDouble, VendorError } from './openai'
export { answerFor, batchCostMicros } from './answers'
export { Timeline } from './timeline'

export interface BatchVendorOptions extends TimelineOptions {
  /**
   * @default a FakeClock from now: the test moves time, and the vendor's timestamps start near the
   * client's, as a real vendor's do (a lost submission is looked for among batches not older than it)
   */
  clock?: Clock
  /** false: every batch endpoint answers 404. @default true */
  batchEndpoints?: boolean
  /**
   * POST /v1/batches and POST /v1/messages/batches create the batch and then never answer, while
   * this is true: a client killed then has a batch at the vendor whose id it never saw.
   * @default false
   */
  hangAfterCreate?: boolean
}

export interface RecordedCall {
  method: string
  path: string
  at: number
}

export interface BatchVendor {
  /** http://127.0.0.1:PORT */
  url: string
  /** The OpenAI base URL (`${url}/v1`). */
  openaiBase: string
  clock: Clock
  openai: OpenAiBatchDouble
  anthropic: AnthropicBatchDouble
  calls: RecordedCall[]
  /**
   * What the vendor bills for the lines it answered (succeeded), at the batch rate, in
   * micro-dollars; prices by model.
   */
  billMicros(prices: Record<string, ListPrice>): number
  /** Answer text by custom_id, of every line that succeeded. */
  answers(): Map<string, string>
  close(): Promise<void>
}

/** An answer never sent (hangAfterCreate). */
const HANG: Promise<never> = new Promise(() => {})

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function authorized(req: IncomingMessage, anthropic: boolean): boolean {
  if (anthropic) return typeof req.headers['x-api-key'] === 'string'
  return /^Bearer \S+/.test(String(req.headers['authorization'] ?? ''))
}

/** Starts both doubles on a free loopback port. */
export async function startBatchVendor(options: BatchVendorOptions = {}): Promise<BatchVendor> {
  const clock = options.clock ?? new FakeClock(Date.now())
  const openai = new OpenAiBatchDouble(clock, options)
  const anthropic = new AnthropicBatchDouble(clock, options)
  const calls: RecordedCall[] = []
  let url = ''

  async function route(req: IncomingMessage, body: Buffer): Promise<[number, unknown, string?]> {
    const path = (req.url ?? '/').split('?')[0]!
    const method = req.method ?? 'GET'
    const isAnthropic = path.startsWith('/v1/messages/batches')
    const isOpenAi = path.startsWith('/v1/files') || path.startsWith('/v1/batches')
    if (!isAnthropic && !isOpenAi) return [404, { error: { message: `no route ${path}` } }]
    if (options.batchEndpoints === false) return [404, { error: { message: 'Not Found' } }]
    if (!authorized(req, isAnthropic)) {
      return [401, { error: { message: 'missing or invalid key', type: 'authentication_error' } }]
    }
    const json = () => JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>
    let m: RegExpMatchArray | null
    if (isAnthropic) {
      if (method === 'POST' && path === '/v1/messages/batches') {
        const created = anthropic.create(json(), body.length)
        if (options.hangAfterCreate) return HANG
        return [200, created]
      }
      if (method === 'GET' && path === '/v1/messages/batches') return [200, anthropic.list(url)]
      if ((m = path.match(/^\/v1\/messages\/batches\/([^/]+)$/)) && method === 'GET') {
        return [200, anthropic.batchJson(m[1]!, url)]
      }
      if ((m = path.match(/^\/v1\/messages\/batches\/([^/]+)\/cancel$/)) && method === 'POST') {
        return [200, anthropic.cancel(m[1]!, url)]
      }
      if ((m = path.match(/^\/v1\/messages\/batches\/([^/]+)\/results$/)) && method === 'GET') {
        return [200, anthropic.results(m[1]!), 'application/binary']
      }
      return [404, { type: 'error', error: { type: 'not_found_error', message: path } }]
    }
    if (method === 'POST' && path === '/v1/files') {
      const form = await new Response(body, {
        headers: { 'content-type': String(req.headers['content-type'] ?? '') },
      }).formData()
      const file = form.get('file')
      const purpose = String(form.get('purpose') ?? '')
      if (file === null || typeof file === 'string') {
        return [400, { error: { message: 'file: Field required' } }]
      }
      return [200, openai.uploadFile(purpose, file.name, await file.text())]
    }
    if ((m = path.match(/^\/v1\/files\/([^/]+)\/content$/)) && method === 'GET') {
      return [200, openai.fileContent(m[1]!), 'application/octet-stream']
    }
    if (method === 'POST' && path === '/v1/batches') {
      const created = openai.createBatch(json())
      if (options.hangAfterCreate) return HANG
      return [200, created]
    }
    if (method === 'GET' && path === '/v1/batches') {
      return [200, openai.list(new URL(req.url ?? '/', 'http://x').searchParams)]
    }
    if ((m = path.match(/^\/v1\/batches\/([^/]+)$/)) && method === 'GET') {
      return [200, openai.batchJson(m[1]!)]
    }
    if ((m = path.match(/^\/v1\/batches\/([^/]+)\/cancel$/)) && method === 'POST') {
      return [200, openai.cancelBatch(m[1]!)]
    }
    return [404, { error: { message: `no route ${method} ${path}` } }]
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      calls.push({ method: req.method ?? 'GET', path: req.url ?? '/', at: clock.now() })
      route(req, Buffer.concat(chunks)).then(
        ([status, body, type]) => send(res, status, body, type),
        (err: unknown) => {
          if (err instanceof VendorError) send(res, err.status, err.body)
          else send(res, 500, { error: { message: String((err as Error).message) } })
        },
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  function* timelines() {
    for (const b of openai.batches.values()) if (b.timeline) yield b.timeline
    for (const b of anthropic.batches.values()) yield b.timeline
  }

  return {
    url,
    openaiBase: `${url}/v1`,
    clock,
    openai,
    anthropic,
    calls,
    billMicros(prices) {
      let total = 0
      for (const t of timelines()) {
        for (const l of t.lines) {
          if (t.lineEnd(l) !== 'succeeded') continue
          const price = prices[String(l.body['model'])]
          if (!price) throw new Error(`no price for ${String(l.body['model'])}`)
          total += batchCostMicros(l.answer, price)
        }
      }
      return total
    },
    answers() {
      const out = new Map<string, string>()
      for (const t of timelines()) {
        for (const l of t.lines)
          if (t.lineEnd(l) === 'succeeded') out.set(l.customId, l.answer.text)
      }
      return out
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
