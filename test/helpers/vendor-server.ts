/**
 * A loopback server that answers as OpenAI's Chat Completions and Anthropic's Messages APIs do
 * (a 200 with the vendor's body shape and usage; a vendor-shaped 404 for any other route) and
 * records every request it gets, headers included, so a test can say who received which key.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface VendorRequest {
  method: string
  url: string
  headers: Record<string, string | string[] | undefined>
  body: unknown
}

export interface VendorServer {
  /** http://127.0.0.1:PORT, no path: OpenAI's routes are under `${url}/v1`. */
  url: string
  requests: VendorRequest[]
  close(): Promise<void>
}

/** Starts a server on a free loopback port. */
export async function startVendorServer(): Promise<VendorServer> {
  const requests: VendorRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let body: unknown
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        body = undefined
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      const answer = respond(req.method ?? '', req.url ?? '', body)
      res.writeHead(answer.status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function respond(method: string, url: string, body: unknown): { status: number; body: unknown } {
  const model = (body as { model?: unknown } | undefined)?.model
  const path = url.split('?')[0] ?? ''
  if (method === 'POST' && path.endsWith('/chat/completions')) {
    return {
      status: 200,
      body: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model,
        choices: [
          { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      },
    }
  }
  if (method === 'POST' && path.endsWith('/v1/messages')) {
    return {
      status: 200,
      body: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 10, output_tokens: 2 },
      },
    }
  }
  return {
    status: 404,
    body: { error: { type: 'not_found_error', message: `no route ${method} ${path}` } },
  }
}
