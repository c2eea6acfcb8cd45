/**
 * A loopback server speaking OpenAI's Chat Completions or Anthropic's Messages API, as the real
 * ones answer a successful call, that records every request body it receives. `answer` decides
 * each response (a test makes it drop usage, or send a body that cannot be read).
 */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createEngine } from '../../src/main/engine/app/engine'

export type Dialect = 'openai' | 'anthropic'

export interface Received {
  path: string
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
  /** The body as sent: its numbers with every digit (`body` went through JSON.parse). */
  raw: string
}

/** What a call gets back: a body (an object is sent as JSON, a string as is) and a status. */
export type Answer = (req: Received, n: number) => { status?: number; body: unknown } | undefined

export interface VendorServer {
  /** The base URL the provider is given (OpenAI: ends in /v1). */
  url: string
  received: Received[]
  close(): Promise<void>
}

/** The answer a vendor gives a call: text, and usage unless `usage` is null. */
export function vendorAnswer(dialect: Dialect, text: string, usage: unknown = null): unknown {
  if (dialect === 'openai') {
    return {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      ...(usage === null ? {} : { usage }),
    }
  }
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    ...(usage === null ? {} : { usage }),
  }
}

/** Usage as the dialect reports it. */
export function vendorUsage(dialect: Dialect, input: number, output: number): unknown {
  return dialect === 'openai'
    ? { prompt_tokens: input, completion_tokens: output, total_tokens: input + output }
    : { input_tokens: input, output_tokens: output }
}

export async function startVendor(dialect: Dialect, answer?: Answer): Promise<VendorServer> {
  const received: Received[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const body = JSON.parse(raw) as Record<string, unknown>
      const r: Received = { path: req.url ?? '', headers: req.headers, body, raw }
      received.push(r)
      const a = answer?.(r, received.length) ?? {
        body: vendorAnswer(dialect, `answer ${received.length}`, vendorUsage(dialect, 12, 3)),
      }
      send(res, a.status ?? 200, a.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${dialect === 'openai' ? '/v1' : ''}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

/** A database whose provider `id` calls the server (the Settings way). */
export async function databaseFor(dbPath: string, id: Dialect, server: VendorServer) {
  const engine = createEngine({ dbPath })
  await engine.handlers['settings:set']({ baseUrls: { [id]: server.url } })
  await engine.shutdown()
}

/**
 * The environment of a `pacer run` on that server: its base URL given in the environment too
 * (where a key from the environment may go), and a key where the provider needs one.
 */
export function envFor(id: Dialect, server: VendorServer): NodeJS.ProcessEnv {
  return id === 'openai'
    ? { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: '' }
    : { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789' }
}
