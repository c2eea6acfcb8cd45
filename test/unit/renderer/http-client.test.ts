/**
 * The HTTP client's refusals and connection states, with a scripted EventSource and fetch on fake
 * time: the transitions (drop, browser retry, browser giving up on a 401, reopen) are driven one
 * by one here; test/e2e/console-resilience.test.ts checks the same against real Chromium and a
 * real server, and event-stream.test.ts the stream's own timing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createHttpPacer, type ConnectionState } from '../../../src/renderer/src/http-client'
import { ScriptedEventSource } from './scripted-event-source'

function reply(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  })
}

function setup(fetchImpl: (url: string, init?: RequestInit) => Promise<Response>) {
  ScriptedEventSource.all = []
  const fetchSpy = vi.fn(fetchImpl)
  const downloads: { file: Blob; fileName: string }[] = []
  const api = createHttpPacer({
    baseUrl: 'http://127.0.0.1:4123',
    token: 'a'.repeat(64),
    fetch: fetchSpy as unknown as typeof fetch,
    createEventSource: (url) => new ScriptedEventSource(url),
    download: (file, fileName) => downloads.push({ file, fileName }),
    retryMs: 5,
  })
  const states: ConnectionState[] = []
  api.onConnectionChanged((s) => states.push(s))
  return { api, fetchSpy, downloads, states, es: () => ScriptedEventSource.last() }
}

/** Lets fake time pass, the probes' fetches and their callbacks settled on the way. */
const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms)

describe('createHttpPacer: values JSON cannot carry', () => {
  it('refuses Infinity in a command with the field named, and sends nothing', async () => {
    const { api, fetchSpy } = setup(async () => reply(200, { ok: true, value: null }))
    const tasks = [{ type: 't', payload: { items: [{ price: 1 }, { price: Infinity }] } }]
    expect(await api.enqueueTasks({ tasks })).toEqual({
      ok: false,
      error: {
        code: 'invalid_input',
        message: 'tasks[0].payload.items[1].price is Infinity, which is not JSON',
        field: 'tasks[0].payload.items[1].price',
      },
    })
    expect(await api.ledgerOverTime({ bucketMs: NaN })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', field: 'bucketMs' },
    })
    expect(fetchSpy).not.toHaveBeenCalled()
  })

  it('refuses a non-finite export filter without starting a download', async () => {
    const { api, downloads } = setup(async () => reply(200, {}))
    expect(await api.exportLedger({ kind: 'events', since: Infinity })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', field: 'since' },
    })
    expect(downloads).toEqual([])
  })

  it("downloads a batch's answers from /api/results with the token in a header, not the URL", async () => {
    const { api, fetchSpy, downloads } = setup(
      async () =>
        new Response('{"line":1}\n', {
          status: 200,
          headers: { 'content-disposition': 'attachment; filename="pacer-results-20250131.csv"' },
        }),
    )
    expect(await api.exportResults({ batchId: 'b 1', format: 'csv' })).toEqual({
      ok: true,
      value: { path: null, rows: -1 },
    })
    const [url, init] = fetchSpy.mock.calls[0]!
    expect(url).toBe('http://127.0.0.1:4123/api/results?format=csv&batchId=b+1')
    expect(init?.headers).toEqual({ authorization: `Bearer ${'a'.repeat(64)}` })
    expect(downloads.map((d) => d.fileName)).toEqual(['pacer-results-20250131.csv'])
    expect(await api.exportResults({ format: 'xml' as 'csv' })).toMatchObject({
      ok: false,
      error: { field: 'format' },
    })
    expect(fetchSpy).toHaveBeenCalledTimes(1)
  })

  it('sends a finite input, an undefined optional field simply left out', async () => {
    const { api, fetchSpy } = setup(async () => reply(200, { ok: true, value: [] }))
    expect(await api.listTasks({ offset: 0, batchId: undefined })).toEqual({ ok: true, value: [] })
    expect(fetchSpy).toHaveBeenCalledTimes(1)
    expect(fetchSpy.mock.calls[0]![1]!.body).toBe('{"offset":0}')
  })
})

describe('createHttpPacer: connection state', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('goes open → reconnecting on a drop, and back to open with a reload signal', () => {
    const { api, states, es } = setup(async () => reply(200, {}))
    const tasks: unknown[] = []
    api.onTasksChanged((e) => tasks.push(e))
    expect(api.connectionState()).toBe('connecting')
    es().open()
    expect(api.connectionState()).toBe('open')
    expect(tasks).toEqual([])
    es().drop()
    expect(api.connectionState()).toBe('reconnecting')
    // The browser retries by itself: the same EventSource opens again.
    es().open()
    expect(states).toEqual(['open', 'reconnecting', 'open'])
    expect(ScriptedEventSource.all).toHaveLength(1)
    expect(tasks).toEqual([{ batches: [], tasks: [], truncated: true }])
  })

  it('says unauthorized when the browser gives up and the server refuses the token', async () => {
    let status = 401
    const { api, states, es, fetchSpy } = setup(async () =>
      reply(status, { ok: false, error: { code: 'unauthorized', message: 'wrong token' } }),
    )
    api.onSchedulerChanged(() => undefined)
    const first = es()
    first.open()
    first.giveUp()
    expect(first.closed).toBe(true)
    // The first probe, retryMs after the browser gave up.
    await elapse(5)
    expect(api.connectionState()).toBe('unauthorized')
    expect(fetchSpy.mock.calls[0]![0]).toBe('http://127.0.0.1:4123/api/commands/scheduler:get')
    // The server takes the token again (or a new one at the same address): a new stream opens.
    status = 200
    expect(ScriptedEventSource.all).toHaveLength(1)
    await elapse(10)
    expect(ScriptedEventSource.all).toHaveLength(2)
    es().open()
    expect(api.connectionState()).toBe('open')
    expect(states).toEqual(['open', 'reconnecting', 'unauthorized', 'open'])
  })

  it('keeps probing while the server is unreachable after the browser gave up', async () => {
    let up = false
    const { api, es, fetchSpy } = setup(async () => {
      if (!up) throw new TypeError('fetch failed')
      return reply(200, { ok: true, value: [] })
    })
    api.onLedgerChanged(() => undefined)
    es().giveUp()
    expect(api.connectionState()).toBe('reconnecting')
    // Probes 5 and 10 ms apart (the backoff doubles): both find the server down.
    await elapse(15)
    expect(fetchSpy).toHaveBeenCalledTimes(2)
    expect(api.connectionState()).toBe('reconnecting')
    expect(ScriptedEventSource.all).toHaveLength(1)
    up = true
    await elapse(20)
    expect(ScriptedEventSource.all).toHaveLength(2)
    es().open()
    expect(api.connectionState()).toBe('open')
  })

  it('a command answered 401 marks the session unauthorized', async () => {
    const { api } = setup(async () =>
      reply(401, { ok: false, error: { code: 'unauthorized', message: 'wrong token' } }),
    )
    expect(await api.listBatches({})).toMatchObject({ ok: false, error: { code: 'unauthorized' } })
    expect(api.connectionState()).toBe('unauthorized')
  })

  it('stops probing once nobody listens', async () => {
    const { api, es, fetchSpy } = setup(async () => {
      throw new TypeError('fetch failed')
    })
    const off = api.onLedgerChanged(() => undefined)
    es().giveUp()
    off()
    await elapse(60_000)
    expect(fetchSpy).not.toHaveBeenCalled()
  })
})

describe('createHttpPacer: a stream that hangs without closing', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('is kept while heartbeats come, and replaced once it goes silent', async () => {
    const { api, states } = setup(async () => reply(200, { ok: true, value: [] }))
    const off = api.onTasksChanged(() => {})
    const first = ScriptedEventSource.last()
    first.open()
    // The server's heartbeat every 15 s keeps it, well past the 45 s it may stay silent.
    for (let i = 0; i < 8; i++) {
      await elapse(15_000)
      first.fire('heartbeat', '{}')
    }
    expect(first.closed).toBe(false)
    // Silence: no heartbeat, no event, no error — the watchdog gives up on it and reconnects.
    await elapse(50_000)
    expect(first.closed).toBe(true)
    expect(states).toContain('reconnecting')
    await elapse(5)
    expect(ScriptedEventSource.all).toHaveLength(2)
    off()
  })
})
