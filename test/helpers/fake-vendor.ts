// Loopback servers that answer like the vendors do (status codes, rate-limit headers, JSON and
// HTML bodies), recording every request: the providers' integration tests talk to these.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createOpenAiCompatibleProvider } from '../../src/main/engine/providers/openai'
import type { ChatMessage, Provider } from '../../src/main/engine/core/types'

// ---------------------------------------------------------------- loopback vendor

export interface Recorded {
  method: string
  url: string
  headers: Record<string, string | string[] | undefined>
  body: unknown
}

export interface FakeVendor {
  url: string
  port: number
  requests: Recorded[]
  close(): Promise<void>
}

export type Handler = (req: Recorded, res: ServerResponse, raw: IncomingMessage) => void

const servers: FakeVendor[] = []

export async function vendor(handler: Handler): Promise<FakeVendor> {
  const requests: Recorded[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON: kept as text
      }
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      requests.push(recorded)
      handler(recorded, res, req)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const fake: FakeVendor = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  servers.push(fake)
  return fake
}

export function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/**
 * Answers as OpenAI's Chat Completions and Anthropic's Messages APIs do, by route (a 200 with the
 * vendor's body shape and usage), and any other route with a vendor-shaped 404: one server for a
 * test that only needs to see who received which key.
 */
export const eitherDialect: Handler = (req, res) => {
  const model = (req.body as { model?: unknown } | undefined)?.model
  const path = req.url.split('?')[0] ?? ''
  if (req.method === 'POST' && path.endsWith('/chat/completions')) {
    const body = openAiCompletion('ok', {
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
    })
    json(res, 200, { ...(body as object), model })
  } else if (req.method === 'POST' && path.endsWith('/v1/messages')) {
    json(res, 200, {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 2 },
    })
  } else {
    json(res, 404, {
      error: { type: 'not_found_error', message: `no route ${req.method} ${path}` },
    })
  }
}

/** A port nothing listens on: bound, then closed. */
export async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}

/** Closes every vendor started since the last call (each test file's afterEach). */
export async function closeVendors(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()))
}

export const USER: ChatMessage[] = [{ role: 'user', content: 'Say hi.' }]
// Looks like a real key and occurs nowhere else, so any leak is found by a plain substring search.
export const SENTINEL_KEY = 'sk-SENTINEL-9f8e7d6c5b4a3210-DO-NOT-LEAK'

export function openAiCompletion(text: unknown, usage: unknown = {}): unknown {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage,
  }
}

export function openAi(base: string, key: string | null = null, extra = {}): Provider {
  return createOpenAiCompatibleProvider({
    id: 'openai-compatible',
    baseUrl: `${base}/v1`,
    apiKey: () => key,
    ...extra,
  })
}

export function anthropicMessage(text: string, usage: unknown): unknown {
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'text', text },
      { type: 'text', text: ' Bye.' },
    ],
    stop_reason: 'end_turn',
    usage,
  }
}
