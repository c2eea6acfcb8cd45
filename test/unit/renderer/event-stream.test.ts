/**
 * The console's event stream on fake time, with a scripted EventSource and probe: the sharing of
 * one stream, the reload signal after a reconnect, the probe backoff, the unauthorized state and
 * the watchdog that replaces a stream that hangs, each at the moment it is due.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  createEventStream,
  REAL_TIMERS,
  type ConnectionState,
  type EventStreamOptions,
  type ProbeAnswer,
} from '../../../src/renderer/src/event-stream'
import { fakeClock } from '../../helpers/clock'
import { ScriptedEventSource } from './scripted-event-source'

const URL = 'http://127.0.0.1:4123/api/events?token=t'

function setup(extra: Partial<EventStreamOptions> = {}) {
  ScriptedEventSource.all = []
  let answer: ProbeAnswer = 'down'
  const probes: number[] = []
  const stream = createEventStream({
    url: URL,
    createEventSource: (url) => new ScriptedEventSource(url),
    probe: async () => {
      probes.push(Date.now())
      return answer
    },
    ...extra,
  })
  const states: ConnectionState[] = []
  stream.onStateChanged((s) => states.push(s))
  return {
    stream,
    states,
    probes,
    answer: (next: ProbeAnswer) => (answer = next),
    es: () => ScriptedEventSource.last(),
  }
}

/** Lets fake time pass, the probes and their callbacks settled on the way. */
const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms)

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('createEventStream: one stream for every listener', () => {
  it('opens on the first listener, shares it, and closes on the last unsubscribe', () => {
    const { stream, es } = setup()
    const offA = stream.subscribe('ledger:changed', () => undefined)
    const offB = stream.subscribe('tasks:changed', () => undefined)
    expect(ScriptedEventSource.all).toHaveLength(1)
    expect(es().url).toBe(URL)
    offA()
    expect(es().closed).toBe(false)
    offB()
    expect(es().closed).toBe(true)
  })

  it('opens nothing without a URL (no token)', () => {
    const { stream } = setup({ url: null })
    stream.subscribe('ledger:changed', () => undefined)
    expect(ScriptedEventSource.all).toHaveLength(0)
    expect(stream.state()).toBe('connecting')
  })

  it('dispatches by name, skips what is not JSON, and survives a listener that throws', () => {
    const { stream, es } = setup()
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const ledger: unknown[] = []
    const tasks: unknown[] = []
    stream.subscribe('ledger:changed', () => {
      throw new Error('broken view')
    })
    stream.subscribe('ledger:changed', (p) => ledger.push(p))
    stream.subscribe('tasks:changed', (p) => tasks.push(p))
    es().fire('ledger:changed', '{"n":1}')
    es().fire('ledger:changed', 'not json')
    expect(ledger).toEqual([{ n: 1 }])
    expect(tasks).toEqual([])
    expect(log).toHaveBeenCalledTimes(1)
    log.mockRestore()
  })
})

describe('createEventStream: reconnecting', () => {
  it('tells the views to reload when a dropped stream opens again, not on the first open', () => {
    const { stream, states, es } = setup()
    const tasks: unknown[] = []
    stream.subscribe('tasks:changed', (p) => tasks.push(p))
    es().open()
    expect(tasks).toEqual([])
    es().drop()
    expect(stream.state()).toBe('reconnecting')
    es().open()
    expect(tasks).toEqual([{ batches: [], tasks: [], truncated: true }])
    expect(states).toEqual(['open', 'reconnecting', 'open'])
  })

  it('probes with a doubling wait up to 15 s once the browser gave up, and opens when up', async () => {
    const { stream, probes, answer, es } = setup()
    stream.subscribe('scheduler:changed', () => undefined)
    es().open()
    const start = Date.now()
    es().giveUp()
    expect(es().closed).toBe(true)
    await elapse(1000 + 2000 + 4000 + 8000 + 15_000 + 15_000)
    expect(probes.map((t) => t - start)).toEqual([1000, 3000, 7000, 15_000, 30_000, 45_000])
    expect(stream.state()).toBe('reconnecting')
    expect(ScriptedEventSource.all).toHaveLength(1)

    answer('up')
    await elapse(15_000)
    expect(ScriptedEventSource.all).toHaveLength(2)
    es().open()
    expect(stream.state()).toBe('open')

    // Open again, the wait is back to its first value.
    const again = Date.now()
    es().giveUp()
    await elapse(1000)
    expect(probes.at(-1)! - again).toBe(1000)
  })

  it('stops probing once nobody listens', async () => {
    const { stream, probes, es } = setup()
    const off = stream.subscribe('ledger:changed', () => undefined)
    es().giveUp()
    off()
    await elapse(10 * 60_000)
    expect(probes).toEqual([])
  })
})

describe('createEventStream: unauthorized', () => {
  it('says so when a probe finds the token refused, and keeps saying so through errors', async () => {
    const { stream, states, answer, es } = setup()
    stream.subscribe('ledger:changed', () => undefined)
    es().open()
    answer('unauthorized')
    es().giveUp()
    await elapse(1000)
    expect(stream.state()).toBe('unauthorized')
    answer('up')
    await elapse(2000)
    expect(ScriptedEventSource.all).toHaveLength(2)
    // The new stream's error does not hide that the token was refused.
    es().drop()
    expect(stream.state()).toBe('unauthorized')
    es().open()
    expect(states).toEqual(['open', 'reconnecting', 'unauthorized', 'open'])
  })

  it('takes a command refused its token as the same state', () => {
    const { stream, es } = setup()
    stream.subscribe('ledger:changed', () => undefined)
    es().open()
    stream.markUnauthorized()
    expect(stream.state()).toBe('unauthorized')
  })
})

describe('createEventStream: a stream that hangs without closing', () => {
  it('is replaced 45 to 50 s after the last thing it sent, and kept until then', async () => {
    const { stream, states, es } = setup()
    stream.subscribe('ledger:changed', () => undefined)
    const first = es()
    first.open()
    await elapse(40_000)
    first.fire('heartbeat', '{}')
    await elapse(30_000)
    // An event counts as much as a heartbeat.
    first.fire('ledger:changed', '{}')
    await elapse(44_999)
    expect(first.closed).toBe(false)
    await elapse(5001)
    expect(first.closed).toBe(true)
    expect(states).toEqual(['open', 'reconnecting'])
    // What replaces it is the probe's call, as when the browser gives up: here the server is down.
    expect(ScriptedEventSource.all).toHaveLength(1)
  })

  it('is not judged before it opens: connecting is the browser’s to retry', async () => {
    const { stream, es } = setup()
    stream.subscribe('ledger:changed', () => undefined)
    await elapse(10 * 60_000)
    expect(es().closed).toBe(false)
    expect(ScriptedEventSource.all).toHaveLength(1)
  })

  it('honours staleMs and reads the time from the clock it is given', async () => {
    const clock = fakeClock()
    const { stream, es, answer } = setup({
      staleMs: 3000,
      timers: { ...REAL_TIMERS, now: () => clock.now() },
    })
    answer('up')
    stream.subscribe('ledger:changed', () => undefined)
    const first = es()
    first.open()
    // The timers run, but the given clock stands still: the stream never looks stale.
    await elapse(60_000)
    expect(first.closed).toBe(false)
    expect(ScriptedEventSource.all).toHaveLength(1)
    clock.advance(3000)
    await elapse(1000)
    expect(first.closed).toBe(true)
    await elapse(1000)
    expect(ScriptedEventSource.all).toHaveLength(2)
  })
})
