/**
 * The HTTP client's refusals and connection states, with a scripted EventSource and fetch: the
 * transitions (drop, browser retry, browser giving up on a 401, reopen) are driven one by one
 * here; test/e2e/console-resilience.test.ts checks the same against real Chromium and a real server.
 */
import { describe, expect, it, vi } from 'vitest'
import {
  createHttpPacer,
  type ConnectionState,
  type EventSourceLike,
} from '../../../src/renderer/src/http-client'

class ScriptedEventSource implements EventSourceLike {
  static all: ScriptedEventSource[] = []
  readyState = 0
  closed = false
  private listeners = new Map<string, ((event: { data: string }) => void)[]>()
  constructor(readonly url: string) {
    ScriptedEventSource.all.push(this)
  }
  addEventListener(type: string, listener: (event: { data: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener])
  }
  close() {
    this.closed = true
    this.readyState = 2
  }
  fire(type: string, data = '', readyState = this.readyState) {
    this.readyState = readyState
    for (const l of this.listeners.get(type) ?? []) l({ data })
  }
  /** As a browser does: 'open' once connected, 'error' with CONNECTING (retrying) or CLOSED. */
  open() {
    this.fire('open', '', 1)
  }
  drop() {
    this.fire('error', '', 0)
  }
  giveUp() {
    this.fire('error', '', 2)
  }
}

function reply(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  })
}

function setup(
  fetchImpl: (url: string, init?: RequestInit) => Promise<Response>,
  extra: { staleMs?: number } = {},
) {
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
    ...extra,
  })
  const states: ConnectionState[] = []
  api.onConnectionChanged((s) => states.push(s))
  return { api, fetchSpy, downloads, states, es: () => ScriptedEventSource.all.at(-1)! }
}

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

  it('sends a finite input, an undefined optional field simply left out', async () => {
    const { api, fetchSpy } = setup(async () => reply(200, { ok: true, value: [] }))
    expect(await api.listTasks({ offset: 0, batchId: undefined })).toEqual({ ok: true, value: [] })
    expect(fetchSpy).toHaveBeenCalledTimes(1)
    expect(fetchSpy.mock.calls[0]![1]!.body).toBe('{"offset":0}')
  })
})

describe('createHttpPacer: connection state', () => {
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
    await vi.waitFor(() => expect(api.connectionState()).toBe('unauthorized'))
    expect(fetchSpy.mock.calls[0]![0]).toBe('http://127.0.0.1:4123/api/commands/scheduler:get')
    // The server takes the token again (or a new one at the same address): a new stream opens.
    status = 200
    await vi.waitFor(() => expect(ScriptedEventSource.all).toHaveLength(2))
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
    await vi.waitFor(() => expect(fetchSpy.mock.calls.length).toBeGreaterThanOrEqual(2))
    expect(api.connectionState()).toBe('reconnecting')
    up = true
    await vi.waitFor(() => expect(ScriptedEventSource.all).toHaveLength(2))
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
    await new Promise((r) => setTimeout(r, 50))
    expect(fetchSpy).not.toHaveBeenCalled()
  })
})

describe('createHttpPacer: a stream that hangs without closing', () => {
  it('is kept while heartbeats come, and replaced once it goes silent', async () => {
    const { api, states } = setup(async () => reply(200, { ok: true, value: [] }), { staleMs: 60 })
    const off = api.onTasksChanged(() => {})
    const first = ScriptedEventSource.all.at(-1)!
    first.open()
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 20))
      first.fire('heartbeat', '{}')
    }
    expect(first.closed).toBe(false)
    // Silence: no heartbeat, no event, no error — the watchdog gives up on it and reconnects.
    const deadline = Date.now() + 2000
    while (!first.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(first.closed).toBe(true)
    expect(states).toContain('reconnecting')
    while (ScriptedEventSource.all.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10))
    }
    expect(ScriptedEventSource.all.length).toBeGreaterThanOrEqual(2)
    off()
  })
})
