/**
 * The contract client over the headless transport (`pacer serve`): fetch for commands, one shared
 * EventSource for events, a download for the CSV export. Errors — a network failure included —
 * are `{ ok: false }` data, never a rejected promise. No DOM globals at module level and only
 * structural types, so the client runs against a real server under Node in the tests.
 */
import { createPacerClient, type Invoke, type PacerApi, type Subscribe } from '../../shared/client'
import { EVENTS, parseCommand, type EventName, type Reply } from '../../shared/contract'
import { HTTP_ROUTES, TOKEN_PARAM } from '../../shared/http'
import { findNonJson } from '../../shared/json-value'
import { errorReply } from '../../shared/reply'

/** Where the session token is kept once it has been taken out of the address bar. */
export const TOKEN_STORAGE_KEY = 'pacer.sessionToken'

/** The part of EventSource this client uses (so tests can pass their own). */
export interface EventSourceLike {
  addEventListener(type: string, listener: (event: { data: string }) => void): void
  close(): void
  /** 2 (CLOSED) after an `error` means the browser gave up and will not retry by itself. */
  readonly readyState?: number
}

/**
 * The event stream as the console shows it. `reconnecting`: the server cannot be reached (stopped,
 * network down) and the client keeps trying; `unauthorized`: the server answers but refuses the
 * token, which happens when `pacer serve` was restarted (every start makes a new token).
 */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'unauthorized'

/**
 * The HTTP client: the contract's API plus the stream's connection state, which only this
 * transport has (the Electron bridge cannot drop), so it stays out of the shared PacerApi.
 */
export type HttpPacer = PacerApi & {
  readonly connectionState: () => ConnectionState
  /** Called on every change of state; returns an unsubscribe. */
  readonly onConnectionChanged: (listener: (state: ConnectionState) => void) => () => void
}

export interface HttpClientOptions {
  /** The server's origin, e.g. `http://127.0.0.1:4123`. */
  baseUrl: string
  /** The session token; null gives a client whose every call answers `unauthorized`. */
  token: string | null
  /** @default globalThis.fetch */
  fetch?: typeof fetch
  /** Opens the event stream. */
  createEventSource: (url: string) => EventSourceLike
  /** Saves a fetched file (the browser: an object URL and an `<a download>` click). */
  download: (file: Blob, fileName: string) => void
  /**
   * First wait before probing the server after the browser gave up on the stream; doubles up to
   * 15 s, back to this once the stream opens. @default 1000
   */
  retryMs?: number
  /**
   * A stream silent this long is taken for hung (the server sends a heartbeat every 15 s) and
   * replaced. @default 45_000
   */
  staleMs?: number
}

const EVENT_SOURCE_CLOSED = 2
const MAX_RETRY_MS = 15_000

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

/**
 * The contract client over HTTP. `exportLedger` starts a download of GET /api/export and resolves
 * `{ ok: true, value: { path: null, rows: -1 } }`: the browser owns the file from there, so the
 * path and the row count are unknown (-1) to the page.
 */
export function createHttpPacer(options: HttpClientOptions): HttpPacer {
  const base = options.baseUrl.replace(/\/+$/, '')
  const { token } = options
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const { createEventSource, download } = options
  const retryMs = options.retryMs ?? 1000
  const staleMs = options.staleMs ?? 45_000

  let state: ConnectionState = 'connecting'
  const stateListeners = new Set<(state: ConnectionState) => void>()
  const setState = (next: ConnectionState): void => {
    if (next === state) return
    state = next
    for (const listener of [...stateListeners]) {
      try {
        listener(next)
      } catch (err) {
        console.error('pacer: a connection listener failed', err)
      }
    }
  }

  const exportLedger = async (input: unknown): Promise<Reply<unknown>> => {
    // Validate here: a 400 answered to a download would be saved as a file, not shown.
    const refused = unsendable(input)
    if (refused) return refused
    const parsed = parseCommand('ledger:export', input)
    if (!parsed.ok) return parsed
    if (!token) return NO_TOKEN
    const query = new URLSearchParams({ kind: parsed.value.kind })
    if (parsed.value.since !== undefined) query.set('since', String(parsed.value.since))
    if (parsed.value.until !== undefined) query.set('until', String(parsed.value.until))
    if (parsed.value.batchId !== undefined) query.set('batchId', parsed.value.batchId)
    // Fetched with the Authorization header, then saved from memory: a plain link would need the
    // token in its URL, and the browser keeps download URLs in its history.
    let response: Response
    try {
      response = await doFetch(`${base}${HTTP_ROUTES.export}?${query}`, {
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
    const fileName =
      /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? `pacer-${parsed.value.kind}.csv`
    download(file, fileName)
    return { ok: true, value: { path: null, rows: -1 } }
  }

  const invoke: Invoke = async (channel, input) => {
    if (channel === 'ledger:export') return exportLedger(input)
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
    if (response.status === 401) setState('unauthorized')
    if (isReply(body)) return body
    return errorReply(
      'network',
      `unexpected answer from the Pacer server (HTTP ${response.status})`,
    )
  }

  // One EventSource for every listener: browsers cap connections per origin (6 over HTTP/1.1).
  const listeners = new Map<EventName, Set<(payload: unknown) => void>>()
  let source: EventSourceLike | null = null
  let everOpened = false
  let probeTimer: ReturnType<typeof setTimeout> | null = null
  let nextProbeMs = retryMs
  const listenerTotal = () => [...listeners.values()].reduce((n, set) => n + set.size, 0)

  const dispatch = (name: EventName, payload: unknown): void => {
    for (const listener of [...(listeners.get(name) ?? [])]) {
      try {
        listener(payload)
      } catch (err) {
        // One broken view must not starve the others of events.
        console.error(`pacer: a ${name} listener failed`, err)
      }
    }
  }

  // Any answer but a 401 means the server is back and takes the token; a throw means unreachable.
  const probe = async (): Promise<'up' | 'unauthorized' | 'down'> => {
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

  const scheduleProbe = (): void => {
    if (probeTimer !== null) return
    const wait = nextProbeMs
    nextProbeMs = Math.min(nextProbeMs * 2, MAX_RETRY_MS)
    probeTimer = setTimeout(() => {
      void probe().then((answer) => {
        probeTimer = null
        if (source || listenerTotal() === 0) return
        if (answer === 'up') {
          open()
          return
        }
        setState(answer === 'unauthorized' ? 'unauthorized' : 'reconnecting')
        scheduleProbe()
      })
    }, wait)
  }

  // A connection can hang without closing (a frozen server, a sleeping laptop's socket): no error
  // event ever comes. Anything received, heartbeats included, proves the stream alive.
  let lastSeen = 0
  let watchdog: ReturnType<typeof setInterval> | null = null
  const stopWatchdog = () => {
    if (watchdog !== null) clearInterval(watchdog)
    watchdog = null
  }

  const open = () => {
    if (source || !token) return
    const es = createEventSource(
      `${base}${HTTP_ROUTES.events}?${TOKEN_PARAM}=${encodeURIComponent(token)}`,
    )
    lastSeen = Date.now()
    stopWatchdog()
    watchdog = setInterval(
      () => {
        if (source !== es || state !== 'open' || Date.now() - lastSeen < staleMs) return
        es.close()
        source = null
        stopWatchdog()
        setState('reconnecting')
        scheduleProbe()
      },
      Math.min(5000, staleMs / 3),
    )
    es.addEventListener('heartbeat', () => {
      lastSeen = Date.now()
    })
    for (const name of EVENTS) {
      es.addEventListener(name, (event) => {
        lastSeen = Date.now()
        let payload: unknown
        try {
          payload = JSON.parse(event.data)
        } catch {
          return
        }
        dispatch(name, payload)
      })
    }
    es.addEventListener('open', () => {
      if (source !== es) return
      lastSeen = Date.now()
      nextProbeMs = retryMs
      setState('open')
      // What was pushed while the stream was away is gone: tell the views to reload (a truncated
      // change makes the queue refetch; the console reloads the other views on `open`).
      if (everOpened) dispatch('tasks:changed', { batches: [], tasks: [], truncated: true })
      everOpened = true
    })
    es.addEventListener('error', () => {
      if (source !== es) return
      // A token refused earlier stays refused until a probe or an open says otherwise.
      if (state !== 'unauthorized') setState('reconnecting')
      // EventSource retries a dropped connection by itself (the server's `retry:`), but not a
      // non-2xx answer such as the 401 of a server restarted with a new token: then it is
      // CLOSED for good, and this client probes the server and opens a new one.
      if (es.readyState === EVENT_SOURCE_CLOSED) {
        es.close()
        source = null
        stopWatchdog()
        scheduleProbe()
      }
    })
    source = es
  }

  const subscribe: Subscribe = (event, listener) => {
    let set = listeners.get(event)
    if (!set) listeners.set(event, (set = new Set()))
    set.add(listener)
    open()
    return () => {
      set.delete(listener)
      if (listenerTotal() > 0) return
      source?.close()
      source = null
      stopWatchdog()
      if (probeTimer !== null) clearTimeout(probeTimer)
      probeTimer = null
    }
  }

  return Object.freeze({
    ...createPacerClient('http', invoke, subscribe),
    connectionState: () => state,
    onConnectionChanged: (listener: (state: ConnectionState) => void) => {
      stateListeners.add(listener)
      return () => {
        stateListeners.delete(listener)
      }
    },
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
