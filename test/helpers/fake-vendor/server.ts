// The core every fake vendor shares: an HTTP server on a free loopback port that records each
// request (parsed JSON and the raw text), counts the requests open, and is closed with the others
// by closeVendors() in a test file's afterEach.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Recorded {
  method: string
  /** Path and query, as sent. */
  url: string
  /** The path without the query. */
  path: string
  headers: Record<string, string | string[] | undefined>
  /** The body parsed as a JSON object ({} when it is not one). */
  body: Record<string, unknown>
  /** The body as sent: its numbers with every digit (`body` went through JSON.parse). */
  raw: string
  /** Date.now() when the request had arrived whole. */
  at: number
}

export interface Served {
  /** http://127.0.0.1:PORT, no path. */
  url: string
  port: number
  requests: Recorded[]
  /** Requests received whose connection has not closed yet (answered or not). */
  open: number
  /** The most requests open at once. */
  maxOpen: number
  close(): Promise<void>
}

export type OnRequest = (req: Recorded, res: ServerResponse, raw: IncomingMessage) => void

const servers: Served[] = []

function parsed(raw: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(raw)
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
}

/** Runs `f` once, whichever of the events that share the returned function fires first. */
function settleOnce(): (f: () => void) => () => void {
  let done = false
  return (f) => () => {
    if (done) return
    done = true
    f()
  }
}

/** Starts a server on `port` (0: any free one) that records every request, then calls `onRequest`. */
export async function serve(onRequest: OnRequest, port = 0): Promise<Served> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const url = req.url ?? ''
      const path = url.split('?')[0] ?? ''
      const body = parsed(raw)
      const recorded = { method: req.method ?? '', url, path, headers: req.headers, body, raw }
      served.requests.push({ ...recorded, at: Date.now() })
      served.open++
      served.maxOpen = Math.max(served.maxOpen, served.open)
      // Done once the answer is sent ('finish'), not when the socket's close is seen: on a loaded
      // machine that event can come after the client already got the answer, freed its slot and
      // sent the next call, which counted two calls where the provider holds one.
      const settle = settleOnce()
      res.once(
        'finish',
        settle(() => served.open--),
      )
      res.once(
        'close',
        settle(() => served.open--),
      )
      onRequest(served.requests.at(-1)!, res, req)
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const bound = (server.address() as AddressInfo).port
  const served: Served = {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    requests: [],
    open: 0,
    maxOpen: 0,
    close: closer(server),
  }
  servers.push(served)
  return served
}

export function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** Sends an object as JSON and a string as is (a body that cannot be read, say). */
export function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
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
