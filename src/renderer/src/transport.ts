/**
 * The console's one way to the engine: `window.pacer` when the Electron preload provided it,
 * otherwise the same typed client over the headless transport (`pacer serve`, http-client.ts).
 * Whichever it is, errors are `{ ok: false }` data — a network failure included.
 *
 * HTTP mode, `exportLedger`: starts a download of GET /api/export and resolves
 * `{ ok: true, value: { path: null, rows: -1 } }` — the browser owns the file from there, so the
 * page knows neither its path nor its row count.
 */
import type { PacerApi } from '../../shared/client'
import {
  createHttpPacer,
  takeSessionToken,
  type ConnectionState,
  type EventSourceLike,
  type HttpPacer,
} from './http-client'

export type { ConnectionState } from './http-client'

function clickDownload(file: Blob, fileName: string): void {
  const url = URL.createObjectURL(file)
  const a = document.createElement('a')
  a.href = url
  a.download = fileName
  a.rel = 'noopener'
  a.style.display = 'none'
  document.body.appendChild(a)
  a.click()
  a.remove()
  // The click has handed the file to the browser; free the memory a little later.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

function sessionStorageOrNull(): Storage | null {
  try {
    return window.sessionStorage
  } catch {
    return null
  }
}

let cached: HttpPacer | null = null

/**
 * The console's client: the preload's in Electron, the HTTP one in a browser. Throws (once, at
 * startup, so main.tsx can say why) when there is no transport at all: no preload and not served
 * over http(s), or served without a session token.
 */
export function getPacer(): PacerApi {
  if (window.pacer) return window.pacer
  if (cached) return cached
  if (window.location.protocol !== 'http:' && window.location.protocol !== 'https:') {
    throw new Error('no Pacer transport: this page has neither the desktop preload nor a server')
  }
  const token = takeSessionToken({
    location: window.location,
    history: window.history,
    storage: sessionStorageOrNull(),
  })
  if (!token) {
    throw new Error('no session token: open the console with the URL that `pacer serve` printed')
  }
  cached = createHttpPacer({
    baseUrl: window.location.origin,
    token,
    createEventSource: (url) => new EventSource(url) as EventSourceLike,
    download: clickDownload,
  })
  return cached
}

/**
 * The event stream's state over HTTP (once getPacer has made the client). The Electron bridge has
 * no connection to lose: there it is always `open`.
 */
export function connectionState(): ConnectionState {
  return cached?.connectionState() ?? 'open'
}

/** Calls `listener` on each change of connection state (never in Electron); returns an unsubscribe. */
export function onConnectionChanged(listener: (state: ConnectionState) => void): () => void {
  return cached?.onConnectionChanged(listener) ?? (() => undefined)
}
