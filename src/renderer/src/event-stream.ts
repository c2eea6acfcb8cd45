/**
 * The engine's events over the headless transport: one EventSource shared by every listener, its
 * connection state, and what keeps it alive — a probe-and-reopen loop with backoff once the
 * browser gives up on the stream, and a watchdog that replaces a stream that hangs without
 * closing. Timers come in through `timers` (the real ones by default), so tests drive every
 * transition with fake time instead of waiting for it.
 */
import type { Subscribe } from '../../shared/client'
import { EVENTS, type EventName } from '../../shared/contract'

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

/** The clock the stream's timers run on. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
  now(): number
}

/** The real clock, looked up at each call (so `vi.useFakeTimers` reaches it too). */
export const REAL_TIMERS: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
}

/** What a probe of the server found: back and taking the token, back but refusing it, or gone. */
export type ProbeAnswer = 'up' | 'unauthorized' | 'down'

export interface EventStreamOptions {
  /** The stream's URL, token included; null (no token) opens nothing. */
  url: string | null
  createEventSource: (url: string) => EventSourceLike
  /** Asks the server whether a new stream would be taken. */
  probe: () => Promise<ProbeAnswer>
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
  /** @default REAL_TIMERS */
  timers?: Timers
}

export interface EventStream {
  /** Adds a listener, opening the stream for the first; the last unsubscribe closes it. */
  readonly subscribe: Subscribe
  readonly state: () => ConnectionState
  /** Called on every change of state; returns an unsubscribe. */
  readonly onStateChanged: (listener: (state: ConnectionState) => void) => () => void
  /** A command was refused the token: the stream would say so too, but a command may be first. */
  readonly markUnauthorized: () => void
}

const EVENT_SOURCE_CLOSED = 2
const MAX_RETRY_MS = 15_000

export function createEventStream(options: EventStreamOptions): EventStream {
  const { url, createEventSource, probe } = options
  const retryMs = options.retryMs ?? 1000
  const staleMs = options.staleMs ?? 45_000
  const timers = options.timers ?? REAL_TIMERS

  const connection = connectionStates()
  const { setState } = connection
  const listeners = eventListeners()
  const { dispatch } = listeners

  // One EventSource for every listener: browsers cap connections per origin (6 over HTTP/1.1).
  let source: EventSourceLike | null = null
  let everOpened = false
  const probes = probeLoop(probe, timers, retryMs)

  const scheduleProbe = (): void =>
    probes.schedule((answer) => {
      if (source || listeners.total() === 0) return
      if (answer === 'up') {
        open()
        return
      }
      setState(answer === 'unauthorized' ? 'unauthorized' : 'reconnecting')
      scheduleProbe()
    })

  const watchdog = staleWatchdog(timers, staleMs)

  const open = () => {
    if (source || url === null) return
    const es = createEventSource(url)
    watchdog.start({
      current: () => source === es,
      open: () => connection.state() === 'open',
      stale: () => {
        es.close()
        source = null
        setState('reconnecting')
        scheduleProbe()
      },
    })
    es.addEventListener('heartbeat', () => {
      watchdog.seen()
    })
    for (const name of EVENTS) {
      es.addEventListener(name, (event) => {
        watchdog.seen()
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
      watchdog.seen()
      probes.reset()
      setState('open')
      // What was pushed while the stream was away is gone: tell the views to reload (a truncated
      // change makes the queue refetch; the console reloads the other views on `open`).
      if (everOpened) dispatch('tasks:changed', { batches: [], tasks: [], truncated: true })
      everOpened = true
    })
    es.addEventListener('error', () => {
      if (source !== es) return
      // A token refused earlier stays refused until a probe or an open says otherwise.
      if (connection.state() !== 'unauthorized') setState('reconnecting')
      // EventSource retries a dropped connection by itself (the server's `retry:`), but not a
      // non-2xx answer such as the 401 of a server restarted with a new token: then it is
      // CLOSED for good, and this client probes the server and opens a new one.
      if (es.readyState === EVENT_SOURCE_CLOSED) {
        es.close()
        source = null
        watchdog.stop()
        scheduleProbe()
      }
    })
    source = es
  }

  const subscribe: Subscribe = (event, listener) => {
    const remove = listeners.add(event, listener)
    open()
    return () => {
      remove()
      if (listeners.total() > 0) return
      source?.close()
      source = null
      watchdog.stop()
      probes.cancel()
    }
  }

  return Object.freeze({
    subscribe,
    state: connection.state,
    onStateChanged: connection.onChanged,
    markUnauthorized: () => setState('unauthorized'),
  })
}

/**
 * A connection can hang without closing (a frozen server, a sleeping laptop's socket): no error
 * event ever comes. Anything received, heartbeats included, proves the stream alive; a stream
 * open and silent for `staleMs` is given up on, checked every third of it (5 s at most).
 */
function staleWatchdog(timers: Timers, staleMs: number) {
  let lastSeen = 0
  let timer: unknown = null
  interface Watched {
    /** Still the stream in use: a replaced one is no longer watched. */
    current: () => boolean
    open: () => boolean
    stale: () => void
  }
  const stop = (): void => {
    if (timer !== null) timers.clearTimeout(timer)
    timer = null
  }
  const watch = (stream: Watched): void => {
    timer = timers.setTimeout(
      () => {
        timer = null
        if (!stream.current()) return
        if (!stream.open() || timers.now() - lastSeen < staleMs) {
          watch(stream)
          return
        }
        stream.stale()
      },
      Math.min(5000, staleMs / 3),
    )
  }
  return {
    /** Watches a new stream, as seen now. */
    start: (stream: Watched): void => {
      lastSeen = timers.now()
      stop()
      watch(stream)
    },
    seen: (): void => {
      lastSeen = timers.now()
    },
    stop,
  }
}

/** The probe's timer: one probe at a time, each wait double the last up to 15 s until reset. */
function probeLoop(probe: () => Promise<ProbeAnswer>, timers: Timers, retryMs: number) {
  let timer: unknown = null
  let waitMs = retryMs
  return {
    schedule: (onAnswer: (answer: ProbeAnswer) => void): void => {
      if (timer !== null) return
      const wait = waitMs
      waitMs = Math.min(waitMs * 2, MAX_RETRY_MS)
      timer = timers.setTimeout(() => {
        void probe().then((answer) => {
          timer = null
          onAnswer(answer)
        })
      }, wait)
    },
    reset: (): void => {
      waitMs = retryMs
    },
    cancel: (): void => {
      if (timer !== null) timers.clearTimeout(timer)
      timer = null
    },
  }
}

/** The connection state and who is told of its changes. */
function connectionStates() {
  let state: ConnectionState = 'connecting'
  const listeners = new Set<(state: ConnectionState) => void>()
  return {
    state: (): ConnectionState => state,
    setState: (next: ConnectionState): void => {
      if (next === state) return
      state = next
      for (const listener of [...listeners]) {
        try {
          listener(next)
        } catch (err) {
          console.error('pacer: a connection listener failed', err)
        }
      }
    },
    onChanged: (listener: (state: ConnectionState) => void): (() => void) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
  }
}

/** The event listeners by event name, and their dispatch. */
function eventListeners() {
  const byName = new Map<EventName, Set<(payload: unknown) => void>>()
  return {
    add: (name: EventName, listener: (payload: unknown) => void): (() => void) => {
      let set = byName.get(name)
      if (!set) byName.set(name, (set = new Set()))
      set.add(listener)
      return () => {
        set.delete(listener)
      }
    },
    total: (): number => [...byName.values()].reduce((n, set) => n + set.size, 0),
    dispatch: (name: EventName, payload: unknown): void => {
      for (const listener of [...(byName.get(name) ?? [])]) {
        try {
          listener(payload)
        } catch (err) {
          // One broken view must not starve the others of events.
          console.error(`pacer: a ${name} listener failed`, err)
        }
      }
    },
  }
}
