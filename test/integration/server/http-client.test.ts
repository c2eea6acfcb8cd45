/**
 * The console's HTTP client (src/renderer/src/http-client.ts) against the real headless server:
 * real fetch, a real SSE connection (a minimal EventSource over node:http, since Node 20 has
 * none), the real export route.
 */
import { get, type ClientRequest } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { startHttpServer, type HttpServerHandle } from '../../../src/main/server/http-server'
import {
  TOKEN_STORAGE_KEY,
  createHttpPacer,
  takeSessionToken,
  type EventSourceLike,
} from '../../../src/renderer/src/http-client'
import { EVENTS, type TypeRollupView } from '../../../src/shared/contract'
import { createFakeEngine, type FakeEngine } from '../../helpers/fake-engine'
import { until } from '../../helpers/until'

/** Just enough of EventSource: one GET, `event:` + `data:` blocks dispatched by name. */
class NodeEventSource implements EventSourceLike {
  static opened = 0
  private listeners = new Map<string, ((event: { data: string }) => void)[]>()
  private request: ClientRequest
  constructor(url: string) {
    NodeEventSource.opened++
    this.request = get(url, (res) => {
      res.setEncoding('utf8')
      let buffer = ''
      res.on('data', (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const name = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (name && data !== undefined) {
            for (const l of this.listeners.get(name) ?? []) l({ data })
          }
        }
      })
    })
    this.request.on('error', () => undefined)
  }
  addEventListener(type: string, listener: (event: { data: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener])
  }
  close() {
    this.request.destroy()
  }
}

let dir: string
let engine: FakeEngine
let server: HttpServerHandle
let downloads: { file: Blob; fileName: string }[]

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pacer-client-'))
  await writeFile(join(dir, 'index.html'), '<!doctype html>')
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})
beforeEach(async () => {
  engine = createFakeEngine()
  server = await startHttpServer({
    handlers: engine.handlers,
    subscribe: engine.subscribe,
    exportCsv: engine.exportCsv,
    exportResults: engine.exportResults,
    rendererDir: dir,
  })
  downloads = []
  NodeEventSource.opened = 0
})
afterEach(async () => {
  await server.close()
})

function client(token: string | null = server.token, extra: { fetch?: typeof fetch } = {}) {
  return createHttpPacer({
    baseUrl: `http://127.0.0.1:${server.port}/`,
    token,
    createEventSource: (url) => new NodeEventSource(url),
    download: (file, fileName) => downloads.push({ file, fileName }),
    ...extra,
  })
}

const totals = { taskType: 'total', runs: 1 } as TypeRollupView

describe('createHttpPacer: commands', () => {
  it('says which transport it is', () => {
    expect(client().transport).toBe('http')
  })

  it('runs a command over HTTP and answers the Reply', async () => {
    const reply = await client().enqueueTasks({ tasks: [{ type: 'summarize', payload: { n: 1 } }] })
    expect(reply).toEqual({ ok: true, value: { batchId: 'batch-1', enqueued: 1 } })
  })

  it('passes the server-side validation error through, field included', async () => {
    const reply = await client().listTasks({ limit: 0 })
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'limit' } })
  })

  it('answers a wrong token as unauthorized data', async () => {
    const reply = await client('0'.repeat(64)).listBatches({})
    expect(reply).toMatchObject({ ok: false, error: { code: 'unauthorized' } })
  })

  it('answers a missing token as unauthorized without a request', async () => {
    const fetchSpy = vi.fn(fetch)
    const reply = await client(null, { fetch: fetchSpy }).listBatches({})
    expect(reply).toMatchObject({ ok: false, error: { code: 'unauthorized' } })
    expect(fetchSpy).not.toHaveBeenCalled()
  })

  it('turns a server that went away into code network, not a rejection', async () => {
    const api = client()
    await server.close()
    const reply = await api.listBatches({})
    expect(reply).toMatchObject({ ok: false, error: { code: 'network' } })
  })

  it('turns an answer that is not a Reply (a proxy error page) into code network', async () => {
    const html = async () => new Response('<h1>Bad gateway</h1>', { status: 502 })
    const reply = await client(server.token, { fetch: html as typeof fetch }).listBatches({})
    expect(reply).toEqual({
      ok: false,
      error: { code: 'network', message: expect.stringContaining('HTTP 502') },
    })
  })
})

describe('createHttpPacer: events', () => {
  it('shares one EventSource between listeners and dispatches by event name', async () => {
    const api = client()
    const a: unknown[] = []
    const b: unknown[] = []
    const tasks: unknown[] = []
    const offA = api.onLedgerChanged((p) => a.push(p))
    const offB = api.onLedgerChanged((p) => b.push(p))
    const offT = api.onTasksChanged((p) => tasks.push(p))
    expect(NodeEventSource.opened).toBe(1)
    await until(() => engine.listenerCount() === EVENTS.length)
    engine.emit('ledger:changed', { totals })
    await until(() => a.length === 1 && b.length === 1)
    expect(a).toEqual([{ totals }])
    expect(tasks).toEqual([])
    offA()
    offB()
    offT()
    // The last unsubscribe closes the stream; the server lets go of the engine.
    await until(() => engine.listenerCount() === 0)
  })

  it('keeps delivering to the others when one listener throws', async () => {
    const api = client()
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const got: unknown[] = []
    api.onLedgerChanged(() => {
      throw new Error('broken view')
    })
    api.onLedgerChanged((p) => got.push(p))
    await until(() => engine.listenerCount() === EVENTS.length)
    engine.emit('ledger:changed', { totals })
    await until(() => got.length === 1)
    expect(log).toHaveBeenCalled()
    log.mockRestore()
  })
})

describe('createHttpPacer: exportLedger', () => {
  it('fetches /api/export with the Authorization header and saves the CSV it answers', async () => {
    const urls: string[] = []
    const spy: typeof fetch = (input, init) => {
      urls.push(String(input))
      return fetch(input, init)
    }
    const reply = await client(server.token, { fetch: spy }).exportLedger({
      kind: 'events',
      since: 10,
      batchId: 'b 1',
    })
    expect(reply).toEqual({ ok: true, value: { path: null, rows: -1 } })
    expect(downloads).toHaveLength(1)
    expect(downloads[0]!.fileName).toMatch(/^pacer-events-\d{8}\.csv$/)
    expect(await downloads[0]!.file.text()).toMatch(/^ts,task_type,cost_usd\r\n/)
    // The token travels in the header, never in a URL the browser would keep in its history.
    const url = new URL(urls[0]!)
    expect(url.pathname).toBe('/api/export')
    expect(Object.fromEntries(url.searchParams)).toEqual({
      kind: 'events',
      since: '10',
      batchId: 'b 1',
    })
    expect(engine.exports).toEqual([{ kind: 'events', filter: { since: 10, batchId: 'b 1' } }])
  })

  it('validates before downloading: a bad kind is an error, not a saved error page', async () => {
    const reply = await client().exportLedger({ kind: 'all' as 'events' })
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'kind' } })
    expect(downloads).toEqual([])
  })
})

describe('takeSessionToken', () => {
  function places(href: string, storage: Map<string, string> | null = new Map()) {
    const replaced: string[] = []
    return {
      replaced,
      storage,
      places: {
        location: { href },
        history: {
          state: { keep: true },
          replaceState: (_d: unknown, _u: string, url?: string) => void replaced.push(url ?? ''),
        },
        storage: storage && {
          getItem: (k: string) => storage.get(k) ?? null,
          setItem: (k: string, v: string) => void storage.set(k, v),
        },
      },
    }
  }

  it('takes the token out of the address bar and keeps it for reloads', () => {
    const p = places('http://127.0.0.1:4000/?view=spend&token=abc123#/queue')
    expect(takeSessionToken(p.places)).toBe('abc123')
    expect(p.replaced).toEqual(['/?view=spend#/queue'])
    expect(p.storage?.get(TOKEN_STORAGE_KEY)).toBe('abc123')
    const reload = places('http://127.0.0.1:4000/?view=spend#/queue', p.storage)
    expect(takeSessionToken(reload.places)).toBe('abc123')
    expect(reload.replaced).toEqual([])
  })

  it('works without storage for this page, and answers null with no token anywhere', () => {
    const p = places('http://127.0.0.1:4000/?token=t1', null)
    expect(takeSessionToken(p.places)).toBe('t1')
    expect(takeSessionToken(places('http://127.0.0.1:4000/').places)).toBeNull()
  })
})
