/**
 * The headless transport: the same contract as the Electron shell, over loopback HTTP + Server-Sent
 * Events, for `pacer serve` and for browsers (Chromium tests, machines without an Electron binary).
 * node:http only. Every /api route needs the session's bearer token; the static console does not
 * (it holds no data, and it needs to load before it can read the token from its own URL).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pipeline } from 'node:stream/promises'
import {
  EVENTS,
  isCommandName,
  isLoopbackHost,
  parseCommand,
  type CommandHandlers,
  type Reply,
} from '../../shared/contract'
import { HTTP_ROUTES, TOKEN_PARAM } from '../../shared/http'
import { errorReply } from '../../shared/reply'
import {
  dispatchCommand,
  toCommandError,
  unknownCommand,
  type EventSubscribe,
} from '../transport/commands'
import { exportFileName, exportFilterOf, type ExportCsv } from '../transport/ledger-export'
import { SECURITY_HEADERS } from '../transport/security-headers'
import { httpStatusFor } from './responses'
import { contentTypeFor, lookupStatic } from './static-files'

export interface HttpServerOptions {
  /** The engine's command handlers (the same map the Electron shell binds to IPC). */
  handlers: CommandHandlers
  /** The engine's event subscription; each SSE client subscribes to every event. */
  subscribe: EventSubscribe
  /** The engine's streaming CSV export, answered by GET /api/export. */
  exportCsv: ExportCsv
  /** The built console (electron-vite's out/renderer). */
  rendererDir: string
  /** @default '127.0.0.1' */
  host?: string
  /** 0 picks a free port. @default 0 */
  port?: number
  /** The session's bearer token. @default 32 random bytes, hex */
  token?: string
  /**
   * Listen on a non-loopback address and accept any Host header. Only for an explicit `--host`:
   * anyone who can reach the machine then reaches the console (still behind the token).
   * @default false
   */
  allowNonLoopback?: boolean
  /** Served as /favicon.ico when out/renderer has none. @default none (answers 204) */
  faviconPath?: string
  /** SSE comment interval, so proxies and idle timers keep the stream open. @default 15000 */
  heartbeatMs?: number
  /** Largest JSON command body: batch imports carry the file (up to 200 MiB). @default 210 MiB */
  maxBodyBytes?: number
}

export interface HttpServerHandle {
  /** Open this in a browser: the console, with the session token. */
  url: string
  port: number
  host: string
  token: string
  /** Ends SSE streams, stops listening, closes idle and active connections. */
  close(): Promise<void>
}

const DEFAULT_MAX_BODY = 210 * 1024 * 1024
const DEFAULT_HEARTBEAT_MS = 15_000
// A tab that stops reading (suspended, debugger paused) must not grow main's memory forever:
// past this much unsent event data the stream is dropped and EventSource reconnects.
const MAX_SSE_BACKLOG = 8 * 1024 * 1024
const COMMAND_PREFIX = HTTP_ROUTES.command('')

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1'
  return host.includes(':') ? `[${host}]` : host
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/** Starts the server; resolves once it listens. Refuses a non-loopback host unless allowed. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const host = options.host ?? '127.0.0.1'
  const allowNonLoopback = options.allowNonLoopback ?? false
  if (!allowNonLoopback && !isLoopbackHost(host)) {
    throw Object.assign(
      new Error(
        `refusing to listen on ${host}: not a loopback address. The console would be reachable ` +
          'from other machines; pass the host explicitly (--host) to allow that.',
      ),
      { code: 'non_loopback_refused' },
    )
  }
  const token = options.token ?? randomBytes(32).toString('hex')
  if (typeof token !== 'string' || token.length < 16) {
    throw new TypeError(`token must be a string of at least 16 characters, got ${typeof token}`)
  }
  // Comparing digests keeps the comparison constant-time even when the lengths differ.
  const tokenDigest = sha256(token)
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS
  const sseStreams = new Set<ServerResponse>()
  let allowedHosts = new Set<string>()

  const tokenMatches = (given: string | null | undefined): boolean =>
    typeof given === 'string' && given.length > 0 && timingSafeEqual(sha256(given), tokenDigest)

  const authorized = (req: IncomingMessage, url: URL, allowQuery: boolean): boolean => {
    const header = req.headers.authorization
    if (typeof header === 'string') {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      return tokenMatches(match?.[1])
    }
    return allowQuery && tokenMatches(url.searchParams.get(TOKEN_PARAM))
  }

  const sendReply = (res: ServerResponse, reply: Reply<unknown>, status = httpStatusFor(reply)) => {
    const body = JSON.stringify(reply)
    res.statusCode = status
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Content-Length', Buffer.byteLength(body))
    res.setHeader('Cache-Control', 'no-store')
    if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer')
    res.end(body)
  }

  const unauthorized = (res: ServerResponse) =>
    sendReply(res, errorReply('unauthorized', 'missing or wrong session token'))

  const handleCommand = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST')
      return sendReply(res, errorReply('method_not_allowed', 'commands are POST'), 405)
    }
    if (!authorized(req, url, false)) return unauthorized(res)
    let channel: string
    try {
      channel = decodeURIComponent(url.pathname.slice(COMMAND_PREFIX.length))
    } catch {
      channel = url.pathname.slice(COMMAND_PREFIX.length)
    }
    if (!isCommandName(channel)) {
      return sendReply(res, unknownCommand(channel))
    }
    // Belt and braces next to the token: a page from another origin never gets to run commands.
    const origin = req.headers.origin
    if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`) {
      return sendReply(res, errorReply('forbidden', `cross-origin request from ${origin}`))
    }
    const body = await readBody(req, res, maxBodyBytes)
    if (body === null) return // readBody answered (too large / aborted)
    let input: unknown = {}
    if (body.length > 0) {
      try {
        input = JSON.parse(body.toString('utf8'))
      } catch (err) {
        return sendReply(
          res,
          errorReply('invalid_json', `body is not JSON: ${(err as Error).message}`),
        )
      }
    }
    if (channel === 'ledger:export') {
      // Over HTTP there is no save dialog: the browser downloads GET /api/export instead.
      const parsed = parseCommand('ledger:export', input)
      if (!parsed.ok) return sendReply(res, parsed)
      return sendReply(
        res,
        errorReply('use_download', `over HTTP the ledger is exported by GET ${HTTP_ROUTES.export}`),
      )
    }
    return sendReply(res, await dispatchCommand(options.handlers, channel, input))
  }

  const handleEvents = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET')
      return sendReply(res, errorReply('method_not_allowed', 'events are GET'), 405)
    }
    if (!authorized(req, url, true)) return unauthorized(res)
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    })
    res.write('retry: 2000\n\n')
    sseStreams.add(res)
    const write = (chunk: string) => {
      if (res.writableEnded || res.destroyed) return
      if (res.writableLength > MAX_SSE_BACKLOG) {
        res.destroy()
        return
      }
      res.write(chunk)
    }
    const unsubscribes = EVENTS.map((name) =>
      options.subscribe(name, (payload) => {
        let data: string
        try {
          // JSON.stringify escapes newlines, so one `data:` line always holds the whole payload.
          data = JSON.stringify(payload)
        } catch (err) {
          console.error(`pacer: could not serialize ${name} event:`, err)
          return
        }
        write(`event: ${name}\ndata: ${data}\n\n`)
      }),
    )
    // A named event, not an SSE comment: EventSource hides comments from the page, and the
    // console needs to see the stream is alive to notice one that hangs without closing.
    const heartbeat = setInterval(() => write('event: heartbeat\ndata: {}\n\n'), heartbeatMs)
    heartbeat.unref()
    res.on('close', () => {
      clearInterval(heartbeat)
      for (const unsubscribe of unsubscribes) unsubscribe()
      sseStreams.delete(res)
    })
  }

  const handleExport = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET')
      return sendReply(res, errorReply('method_not_allowed', 'export is GET'), 405)
    }
    if (!authorized(req, url, true)) return unauthorized(res)
    const query: Record<string, unknown> = {}
    for (const [key, value] of url.searchParams) {
      if (key === TOKEN_PARAM) continue
      // Query strings are text: numbers are converted, anything else reaches zod as is and is
      // refused with the field named.
      query[key] =
        (key === 'since' || key === 'until') && /^\d{1,16}$/.test(value) ? Number(value) : value
    }
    const parsed = parseCommand('ledger:export', query)
    if (!parsed.ok) return sendReply(res, parsed)
    const { kind } = parsed.value
    res.statusCode = 200
    res.setHeader('Content-Type', 'text/csv; charset=utf-8')
    res.setHeader('Content-Disposition', `attachment; filename="${exportFileName(kind)}"`)
    res.setHeader('Cache-Control', 'no-store')
    try {
      await options.exportCsv(kind, res, exportFilterOf(parsed.value))
      if (!res.writableEnded) res.end()
    } catch (err) {
      if (!res.headersSent) {
        res.removeHeader('Content-Disposition')
        const error = toCommandError(err)
        if (error.code === 'internal') console.error('pacer: export failed:', err)
        return sendReply(res, { ok: false, error })
      }
      // The browser cancelled the download: nothing failed on this side.
      if ((err as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE' && res.destroyed) return
      // Rows already went out: cut the connection so the download shows as failed, not complete.
      console.error('pacer: export failed mid-stream:', err)
      res.destroy()
    }
  }

  const handleStatic = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD')
      return sendText(res, 405, 'method not allowed')
    }
    let found = await lookupStatic(options.rendererDir, url.pathname)
    if (found.kind === 'not_found' && url.pathname === '/favicon.ico') {
      // Browsers ask for it on their own; a 404 would show up as a console error in every test.
      const size = options.faviconPath ? await fileSize(options.faviconPath) : null
      if (options.faviconPath && size !== null) {
        const contentType = contentTypeFor(options.faviconPath)
        found = { kind: 'file', path: options.faviconPath, size, contentType }
      } else {
        res.statusCode = 204
        return res.end()
      }
    }
    if (found.kind === 'bad_request') return sendText(res, 400, 'bad path')
    if (found.kind === 'not_found') return sendText(res, 404, 'not found')
    res.statusCode = 200
    res.setHeader('Content-Type', found.contentType)
    res.setHeader('Content-Length', found.size)
    // The first page load carries the session token in its URL: keep it out of the disk cache.
    res.setHeader('Cache-Control', 'no-store')
    if (req.method === 'HEAD') return res.end()
    try {
      await pipeline(createReadStream(found.path), res)
    } catch (err) {
      // The client went away mid-file (a reload, a closed tab): nothing to answer or log.
      if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value)
    const hostHeader = (req.headers.host ?? '').toLowerCase()
    // DNS rebinding: a hostile page whose name resolves to 127.0.0.1 sends its own Host.
    if (!allowNonLoopback && !allowedHosts.has(hostHeader)) {
      return sendText(res, 403, 'unexpected Host header')
    }
    const url = new URL(req.url ?? '/', 'http://pacer.invalid')
    if (url.pathname.startsWith(COMMAND_PREFIX)) return handleCommand(req, res, url)
    if (url.pathname === HTTP_ROUTES.events) return handleEvents(req, res, url)
    if (url.pathname === HTTP_ROUTES.export) return handleExport(req, res, url)
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
      return sendReply(res, errorReply('not_found', `no route ${url.pathname}`))
    }
    return handleStatic(req, res, url)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error('pacer: request failed:', err)
      if (!res.headersSent) sendReply(res, { ok: false, error: toCommandError(err) }, 500)
      else res.destroy()
    })
  })
  // Imports are large; the default 5 min request timeout still applies to slow uploads.
  server.headersTimeout = 30_000

  await new Promise<void>((resolveListen, rejectListen) => {
    const onError = (err: Error) => rejectListen(err)
    server.once('error', onError)
    server.listen(options.port ?? 0, host, () => {
      server.off('error', onError)
      resolveListen()
    })
  })
  const port = (server.address() as AddressInfo).port
  allowedHosts = new Set(
    ['127.0.0.1', 'localhost', '[::1]', urlHost(host).toLowerCase()].map((h) => `${h}:${port}`),
  )

  return {
    url: `http://${urlHost(host)}:${port}/?${TOKEN_PARAM}=${token}`,
    port,
    host,
    token,
    close: () =>
      new Promise<void>((resolveClose) => {
        for (const res of sseStreams) res.end()
        server.close(() => resolveClose())
        server.closeAllConnections()
      }),
  }
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(text))
  res.end(text)
}

async function fileSize(path: string): Promise<number | null> {
  try {
    const info = await stat(path)
    return info.isFile() ? info.size : null
  } catch {
    return null
  }
}

/**
 * Reads a request body up to `limit` bytes. Over the limit it answers 413 and closes the
 * connection (rather than reading hundreds of MB only to throw them away); returns null then.
 */
function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<Buffer | null> {
  const tooLarge = () => {
    const body = JSON.stringify(
      errorReply('payload_too_large', `request body over ${Math.floor(limit / 1048576)} MiB`),
    )
    res.writeHead(413, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    })
    res.end(body, () => req.socket.destroy())
  }
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    tooLarge()
    return Promise.resolve(null)
  }
  return new Promise((resolveBody) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const settle = (value: Buffer | null) => {
      if (settled) return
      settled = true
      resolveBody(value)
    }
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > limit) {
        req.pause()
        tooLarge()
        settle(null)
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => settle(Buffer.concat(chunks, size)))
    // Client went away mid-upload: nobody to answer.
    req.on('error', () => settle(null))
    req.on('close', () => settle(null))
  })
}
