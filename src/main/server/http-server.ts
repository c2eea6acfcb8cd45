/**
 * The headless transport: the same contract as the Electron shell, over loopback HTTP + Server-Sent
 * Events, for `pacer serve` and for browsers (Chromium tests, machines without an Electron binary).
 * node:http only. This file listens and routes; each route lives beside it (event-stream.ts,
 * csv-export.ts, static-files.ts). Every /api route needs the session's bearer token; the static
 * console does not (it holds no data, and it needs to load before it can read the token from its
 * own URL).
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hostname, networkInterfaces } from 'node:os'
import {
  isCommandName,
  isLoopbackHost,
  parseCommand,
  type CommandHandlers,
} from '../../shared/contract'
import { HTTP_ROUTES, TOKEN_PARAM } from '../../shared/http'
import { errorReply } from '../../shared/reply'
import {
  dispatchCommand,
  toCommandError,
  unknownCommand,
  type EventSubscribe,
} from '../transport/commands'
import type { ExportCsv } from '../transport/ledger-export'
import type { ExportResults } from '../transport/results-export'
import { SECURITY_HEADERS } from '../transport/security-headers'
import { answerExport, answerResultsExport } from './csv-export'
import { createEventStreams } from './event-stream'
import { parseJsonBody, readBody } from './request-body'
import { sendReply, sendText } from './responses'
import { createTokenCheck, sessionCookie } from './session-token'
import { serveStatic } from './static-files'

export interface HttpServerOptions {
  /** The engine's command handlers (the same map the Electron shell binds to IPC). */
  handlers: CommandHandlers
  /** The engine's event subscription; each SSE client subscribes to every event. */
  subscribe: EventSubscribe
  /** The engine's streaming CSV export, answered by GET /api/export. */
  exportCsv: ExportCsv
  /** The engine's streaming results export, answered by GET /api/results. */
  exportResults: ExportResults
  /** The built console (electron-vite's out/renderer). */
  rendererDir: string
  /** @default '127.0.0.1' */
  host?: string
  /** 0 picks a free port. @default 0 */
  port?: number
  /** The session's bearer token. @default 32 random bytes, hex */
  token?: string
  /**
   * Listen on a non-loopback address (`--allow-remote`): anyone who can reach the machine reaches
   * the console, so every request then needs the session token (the page's own files too: the
   * page sets it as a cookie), and the Host header must name an address actually bound.
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
const COMMAND_PREFIX = HTTP_ROUTES.command('')

/** One /api route: its method, where it takes the token from, and what it answers once allowed. */
interface ApiRoute {
  method: 'GET' | 'POST'
  /** The 405 message for any other method. */
  methodRefusal: string
  /** EventSource and downloads cannot set headers: those routes also take `?token=`. */
  tokenInQuery: boolean
  answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> | void
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1'
  return host.includes(':') ? `[${host}]` : host
}

/**
 * The Host names a request may carry for a server bound to `host`: the loopback names always;
 * for an address of every interface (0.0.0.0, ::) each interface's address and the machine's
 * name; otherwise the address itself. Any other name is a DNS-rebinding attempt.
 */
function boundNames(host: string): string[] {
  const names = ['127.0.0.1', 'localhost', '[::1]']
  if (host === '0.0.0.0' || host === '::') {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) {
        if (host === '0.0.0.0' && a.family !== 'IPv4') continue
        names.push(a.family === 'IPv6' ? `[${a.address}]` : a.address)
      }
    }
    names.push(hostname())
  } else {
    names.push(urlHost(host))
  }
  return names.map((n) => n.toLowerCase())
}

function refuseNonLoopback(host: string): never {
  throw Object.assign(
    new Error(
      `refusing to listen on ${host}: not a loopback address. The console would be reachable ` +
        'from other machines; pass the host explicitly (--host) to allow that.',
    ),
    { code: 'non_loopback_refused' },
  )
}

/** Starts the server; resolves once it listens. Refuses a non-loopback host unless allowed. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const host = options.host ?? '127.0.0.1'
  const allowNonLoopback = options.allowNonLoopback ?? false
  if (!allowNonLoopback && !isLoopbackHost(host)) refuseNonLoopback(host)
  const token = options.token ?? randomBytes(32).toString('hex')
  const authorized = createTokenCheck(token)
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY
  const streams = createEventStreams(options.subscribe, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS)
  let allowedHosts = new Set<string>()

  const commands: ApiRoute = {
    method: 'POST',
    methodRefusal: 'commands are POST',
    tokenInQuery: false,
    answer: (req, res, url) => answerCommand(req, res, url, options.handlers, maxBodyBytes),
  }
  const events: ApiRoute = {
    method: 'GET',
    methodRefusal: 'events are GET',
    tokenInQuery: true,
    answer: (_req, res) => streams.open(res),
  }
  const download: ApiRoute = {
    method: 'GET',
    methodRefusal: 'export is GET',
    tokenInQuery: true,
    answer: (_req, res, url) => answerExport(res, url, options.exportCsv),
  }
  const answers: ApiRoute = {
    method: 'GET',
    methodRefusal: 'results are GET',
    tokenInQuery: true,
    answer: (_req, res, url) => answerResultsExport(res, url, options.exportResults),
  }
  const apiRouteFor = (pathname: string): ApiRoute | null => {
    if (pathname.startsWith(COMMAND_PREFIX)) return commands
    if (pathname === HTTP_ROUTES.events) return events
    if (pathname === HTTP_ROUTES.export) return download
    if (pathname === HTTP_ROUTES.results) return answers
    return null
  }

  const answerApi = (route: ApiRoute, req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== route.method) {
      res.setHeader('Allow', route.method)
      return sendReply(res, errorReply('method_not_allowed', route.methodRefusal), 405)
    }
    if (!authorized(req, url, route.tokenInQuery)) {
      return sendReply(res, errorReply('unauthorized', 'missing or wrong session token'))
    }
    return route.answer(req, res, url)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value)
    const hostHeader = (req.headers.host ?? '').toLowerCase()
    // DNS rebinding: a hostile page whose name resolves to 127.0.0.1 sends its own Host.
    // Remote or not: names that are not an address bound here are refused.
    if (!allowedHosts.has(hostHeader)) {
      return sendText(res, 403, 'unexpected Host header')
    }
    const url = new URL(req.url ?? '/', 'http://pacer.invalid')
    const route = apiRouteFor(url.pathname)
    if (route) return answerApi(route, req, res, url)
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
      return sendReply(res, errorReply('not_found', `no route ${url.pathname}`))
    }
    if (allowNonLoopback) {
      // Reachable from other machines: the page and its files only with the token, from the URL
      // (the first load, which keeps it as a cookie for the rest) or that cookie.
      const fromUrl = authorized(req, url, true)
      if (!fromUrl && !authorized(req, url, false, true)) {
        return sendText(res, 401, 'open the URL pacer serve printed (it carries the session token)')
      }
      if (fromUrl) res.setHeader('Set-Cookie', sessionCookie(token))
    }
    return serveStatic(req, res, url, options)
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
  allowedHosts = new Set(boundNames(host).map((h) => `${h}:${port}`))

  return {
    url: `http://${urlHost(host)}:${port}/?${TOKEN_PARAM}=${token}`,
    port,
    host,
    token,
    close: () =>
      new Promise<void>((resolveClose) => {
        streams.closeAll()
        server.close(() => resolveClose())
        server.closeAllConnections()
      }),
  }
}

/**
 * Answers an authorized POST /api/commands/<channel>: the channel and origin checked, the JSON
 * body read within the limit, then the shared dispatch.
 */
async function answerCommand(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  handlers: CommandHandlers,
  maxBodyBytes: number,
): Promise<void> {
  let channel: string
  try {
    channel = decodeURIComponent(url.pathname.slice(COMMAND_PREFIX.length))
  } catch {
    channel = url.pathname.slice(COMMAND_PREFIX.length)
  }
  if (!isCommandName(channel)) return sendReply(res, unknownCommand(channel))
  // Belt and braces next to the token: a page from another origin never gets to run commands.
  const origin = req.headers.origin
  if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`) {
    return sendReply(res, errorReply('forbidden', `cross-origin request from ${origin}`))
  }
  const body = await readBody(req, res, maxBodyBytes)
  if (body === null) return // readBody answered (too large / aborted)
  const parsed = parseJsonBody(body)
  if (!parsed.ok) return sendReply(res, parsed)
  const input = parsed.value
  // Over HTTP there is no save dialog: the browser downloads GET /api/export or /api/results.
  const downloads = { 'ledger:export': HTTP_ROUTES.export, 'results:export': HTTP_ROUTES.results }
  if (channel === 'ledger:export' || channel === 'results:export') {
    const parsed = parseCommand(channel, input)
    if (!parsed.ok) return sendReply(res, parsed)
    return sendReply(
      res,
      errorReply('use_download', `over HTTP this export is a download: GET ${downloads[channel]}`),
    )
  }
  return sendReply(res, await dispatchCommand(handlers, channel, input))
}
