/**
 * The contract client over the headless transport (`pacer serve`): fetch for commands, one shared
 * EventSource for events, a download for the CSV export. Errors — a network failure included —
 * are `{ ok: false }` data, never a rejected promise. No DOM globals at module level and only
 * structural types, so the client runs against a real server under Node in the tests.
 */
import { createPacerClient, type Invoke, type PacerApi } from '../../shared/client'
import { parseCommand, type Reply } from '../../shared/contract'
import { HTTP_ROUTES, TOKEN_PARAM } from '../../shared/http'
import {
  createEventStream,
  type ConnectionState,
  type EventStreamOptions,
  type ProbeAnswer,
} from './event-stream'
import { findNonJson } from '../../shared/json-value'
import { errorReply } from '../../shared/reply'

export type { ConnectionState, EventSourceLike, Timers } from './event-stream'

/** Where the session token is kept once it has been taken out of the address bar. */
export const TOKEN_STORAGE_KEY = 'pacer.sessionToken'

/**
 * The HTTP client: the contract's API plus the stream's connection state, which only this
 * transport has (the Electron bridge cannot drop), so it stays out of the shared PacerApi.
 */
export type HttpPacer = PacerApi & {
  readonly connectionState: () => ConnectionState
  /** Called on every change of state; returns an unsubscribe. */
  readonly onConnectionChanged: (listener: (state: ConnectionState) => void) => () => void
}

/** The event stream's options (its clock included) pass through to event-stream.ts. */
export interface HttpClientOptions extends Pick<
  EventStreamOptions,
  'createEventSource' | 'retryMs' | 'staleMs' | 'timers'
> {
  /** The server's origin, e.g. `http://127.0.0.1:4123`. */
  baseUrl: string
  /** The session token; null gives a client whose every call answers `unauthorized`. */
  token: string | null
  /** @default globalThis.fetch */
  fetch?: typeof fetch
  /** Saves a fetched file (the browser: an object URL and an `<a download>` click). */
  download: (file: Blob, fileName: string) => void
}

/** JSON.stringify would send null for Infinity (and drop or mangle worse): refuse, naming where. */
function unsendable(input: unknown): Reply<never> | null {
  const bad = findNonJson(input)
  return bad ? errorReply('invalid_input', bad.message, bad.path) : null
}

function isReply(value: unknown): value is Reply<unknown> {
  if (typeof value !== 'object' || value === null) return false
  const v = value as { ok?: unknown; error?: { code?: unknown; message?: unknown } }
  if (v.ok === true) return 'value' in v
  return (
    v.ok === false &&
    typeof v.error === 'object' &&
    v.error !== null &&
    typeof v.error.code === 'string' &&
    typeof v.error.message === 'string'
  )
}

const NO_TOKEN = errorReply(
  'unauthorized',
  'no session token: open the console with the URL that `pacer serve` printed',
)

/** The server's origin and token, and the page's fetch and save. */
interface HttpLink {
  base: string
  token: string | null
  doFetch: typeof fetch
  download: HttpClientOptions['download']
}

/** The ledger and results exports, fetched with the token and saved by the browser. */
function downloads({ base, token, doFetch, download }: HttpLink) {
  const exportLedger = async (input: unknown): Promise<Reply<unknown>> => {
    // Validate here: a 400 answered to a download would be saved as a file, not shown.
    const refused = unsendable(input)
    if (refused) return refused
    const parsed = parseCommand('ledger:export', input)
    if (!parsed.ok) return parsed
    const query = new URLSearchParams({ kind: parsed.value.kind })
    if (parsed.value.since !== undefined) query.set('since', String(parsed.value.since))
    if (parsed.value.until !== undefined) query.set('until', String(parsed.value.until))
    if (parsed.value.batchId !== undefined) query.set('batchId', parsed.value.batchId)
    const team = parsed.value.scope === 'team'
    if (team) query.set('scope', 'team')
    const name = `pacer-${team ? 'team-' : ''}${parsed.value.kind}.csv`
    return fetchDownload(HTTP_ROUTES.export, query, name)
  }

  const exportResults = async (input: unknown): Promise<Reply<unknown>> => {
    const refused = unsendable(input)
    if (refused) return refused
    const parsed = parseCommand('results:export', input)
    if (!parsed.ok) return parsed
    const query = new URLSearchParams({ format: parsed.value.format })
    if (parsed.value.batchId !== undefined) query.set('batchId', parsed.value.batchId)
    if (parsed.value.raw) query.set('raw', '1')
    return fetchDownload(HTTP_ROUTES.results, query, `pacer-results.${parsed.value.format}`)
  }

  const fetchDownload = async (
    route: string,
    query: URLSearchParams,
    fallbackName: string,
  ): Promise<Reply<unknown>> => {
    if (!token) return NO_TOKEN
    // Fetched with the Authorization header, then saved from memory: a plain link would need the
    // token in its URL, and the browser keeps download URLs in its history.
    let response: Response
    try {
      response = await doFetch(`${base}${route}?${query}`, {
        headers: { authorization: `Bearer ${token}` },
      })
    } catch (err) {
      return errorReply('network', `could not reach the Pacer server: ${(err as Error).message}`)
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '')
      return errorReply('export_failed', `export failed (HTTP ${response.status}) ${text}`.trim())
    }
    const file = await response.blob()
    const disposition = response.headers.get('content-disposition') ?? ''
    const fileName = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName
    download(file, fileName)
    return { ok: true, value: { path: null, rows: -1 } }
  }

  return { exportLedger, exportResults }
}

/**
 * The contract client over HTTP. `exportLedger` starts a download of GET /api/export and resolves
 * `{ ok: true, value: { path: null, rows: -1 } }`: the browser owns the file from there, so the
 * path and the row count are unknown (-1) to the page.
 */
export function createHttpPacer(options: HttpClientOptions): HttpPacer {
  const base = options.baseUrl.replace(/\/+$/, '')
  const { token } = options
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const { download } = options

  // Any answer but a 401 means the server is back and takes the token; a throw means unreachable.
  const probe = async (): Promise<ProbeAnswer> => {
    try {
      const response = await doFetch(`${base}${HTTP_ROUTES.command('scheduler:get')}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
      return response.status === 401 ? 'unauthorized' : 'up'
    } catch {
      return 'down'
    }
  }

  const stream = createEventStream({
    url: token ? `${base}${HTTP_ROUTES.events}?${TOKEN_PARAM}=${encodeURIComponent(token)}` : null,
    createEventSource: options.createEventSource,
    probe,
    retryMs: options.retryMs,
    staleMs: options.staleMs,
    timers: options.timers,
  })

  const { exportLedger, exportResults } = downloads({ base, token, doFetch, download })

  const invoke: Invoke = async (channel, input) => {
    if (channel === 'ledger:export') return exportLedger(input)
    if (channel === 'results:export') return exportResults(input)
    const refused = unsendable(input ?? {})
    if (refused) return refused
    if (!token) return NO_TOKEN
    let response: Response
    try {
      response = await doFetch(`${base}${HTTP_ROUTES.command(channel)}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(input ?? {}),
      })
    } catch (err) {
      return errorReply('network', `could not reach the Pacer server: ${(err as Error).message}`)
    }
    let body: unknown
    try {
      body = await response.json()
    } catch {
      body = undefined
    }
    // Only a server restarted with a new token refuses ours; the stream will say so too, but a
    // command may get there first.
    if (response.status === 401) stream.markUnauthorized()
    if (isReply(body)) return body
    return errorReply(
      'network',
      `unexpected answer from the Pacer server (HTTP ${response.status})`,
    )
  }

  return Object.freeze({
    ...createPacerClient('http', invoke, stream.subscribe),
    connectionState: stream.state,
    onConnectionChanged: stream.onStateChanged,
  })
}

export interface TokenPlaces {
  location: { readonly href: string }
  history: {
    readonly state: unknown
    replaceState(data: unknown, unused: string, url?: string): void
  }
  storage: { getItem(key: string): string | null; setItem(key: string, value: string): void } | null
}

/**
 * Takes the session token out of `?token=` (keeping it in sessionStorage, so a reload works) and
 * removes it from the address bar, the history entry and anything a screenshot would show.
 */
export function takeSessionToken(places: TokenPlaces): string | null {
  const url = new URL(places.location.href)
  const fromUrl = url.searchParams.get(TOKEN_PARAM)
  if (fromUrl) {
    try {
      places.storage?.setItem(TOKEN_STORAGE_KEY, fromUrl)
    } catch {
      // Storage disabled: the token still works for this page's lifetime.
    }
    url.searchParams.delete(TOKEN_PARAM)
    places.history.replaceState(places.history.state, '', `${url.pathname}${url.search}${url.hash}`)
    return fromUrl
  }
  try {
    return places.storage?.getItem(TOKEN_STORAGE_KEY) ?? null
  } catch {
    return null
  }
}
