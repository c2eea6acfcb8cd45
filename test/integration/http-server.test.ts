/**
 * The headless transport end to end: a real node:http server on a free loopback port, real fetch
 * and raw node:http requests (for the Host header and unnormalized paths fetch would fix up).
 */
import { request } from 'node:http'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { startHttpServer, type HttpServerHandle } from '../../src/main/server/http-server'
import { CONTENT_SECURITY_POLICY } from '../../src/main/transport/security-headers'
import { EVENTS, type Reply, type TypeRollupView } from '../../src/shared/contract'
import { createFakeEngine, type FakeEngine } from '../helpers/fake-engine'
import { until } from '../helpers/until'

let dir: string
let rendererDir: string
let engine: FakeEngine
let server: HttpServerHandle
let base: string

const INDEX_HTML = '<!doctype html><title>Pacer</title><div id="root"></div>'
const SECRET = 'this file is outside the renderer folder'

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pacer-http-'))
  rendererDir = join(dir, 'renderer')
  await mkdir(join(rendererDir, 'assets'), { recursive: true })
  await writeFile(join(rendererDir, 'index.html'), INDEX_HTML)
  await writeFile(join(rendererDir, 'assets', 'app.js'), 'console.log("pacer")')
  await writeFile(join(rendererDir, 'assets', 'app.css'), 'body{}')
  await writeFile(join(dir, 'secret.txt'), SECRET)
  await writeFile(join(dir, 'icon.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function start(extra: Partial<Parameters<typeof startHttpServer>[0]> = {}) {
  engine = createFakeEngine()
  server = await startHttpServer({
    handlers: engine.handlers,
    subscribe: engine.subscribe,
    exportCsv: engine.exportCsv,
    exportResults: engine.exportResults,
    rendererDir,
    ...extra,
  })
  base = `http://127.0.0.1:${server.port}`
}

afterEach(async () => {
  await server?.close()
})

function post(channel: string, body: unknown, token: string | null = server.token) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (token !== null) headers.Authorization = `Bearer ${token}`
  return fetch(`${base}/api/commands/${channel}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** A raw request: exact path bytes and any Host header, which fetch would normalize or refuse. */
function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, path, method: 'GET', headers },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** Reads an SSE stream until `count` events arrived; returns them parsed. */
async function readEvents(
  response: Response,
  count: number,
  onOpen?: () => void,
): Promise<{ event: string; data: unknown }[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const events: { event: string; data: unknown }[] = []
  let buffer = ''
  onOpen?.()
  while (events.length < count) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += value
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (event && data) events.push({ event, data: JSON.parse(data) })
      else if (block.startsWith(':')) events.push({ event: 'comment', data: block })
    }
  }
  await reader.cancel()
  return events
}

const totals: TypeRollupView = {
  taskType: '*',
  runs: 3,
  executed: 2,
  reused: 1,
  duplicates: 0,
  avgInputTokens: 100,
  inputTokens: 300,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheSavedMicros: 0,
  cacheWriteExtraMicros: 0,
  outputTokens: 30,
  totalTokens: 330,
  costMicros: 4200,
  unpricedCalls: 0,
  savedMicros: 1400,
  wastedMicros: 0,
  throttled: 0,
  errors: 0,
  abandoned: 0,
  estimatedCalls: 0,
  replayed: 0,
}

describe('startHttpServer: binding', () => {
  it('listens on loopback with a random 32-byte token and prints a URL that carries it', async () => {
    await start()
    expect(server.token).toMatch(/^[0-9a-f]{64}$/)
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`)
    const other = await startHttpServer({ ...engineParts(), rendererDir })
    try {
      expect(other.token).not.toBe(server.token)
    } finally {
      await other.close()
    }
  })

  it.each(['0.0.0.0', '192.168.1.20', '::', 'example.com'])(
    'refuses to bind the non-loopback host %s unless allowNonLoopback',
    async (host) => {
      await expect(startHttpServer({ ...engineParts(), rendererDir, host })).rejects.toMatchObject({
        code: 'non_loopback_refused',
        message: expect.stringContaining(host),
      })
    },
  )

  it('binds 0.0.0.0 when allowNonLoopback is set (the CLI --allow-remote case)', async () => {
    await start({ host: '0.0.0.0', allowNonLoopback: true })
    // Reachable from other machines: even the page needs the token.
    expect((await fetch(`${base}/`)).status).toBe(401)
    expect((await fetch(`${base}/?token=${server.token}`)).status).toBe(200)
  })
})

function engineParts() {
  const e = createFakeEngine()
  return {
    handlers: e.handlers,
    subscribe: e.subscribe,
    exportCsv: e.exportCsv,
    exportResults: e.exportResults,
  }
}

describe('startHttpServer: commands', () => {
  beforeAll(() => undefined)

  it('answers 401 without a token, with a wrong token, and with a token of another length', async () => {
    await start()
    for (const token of [null, 'f'.repeat(64), 'short', `${server.token}x`]) {
      const res = await post('batches:list', {}, token)
      expect(res.status, String(token)).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
      const reply = (await res.json()) as Reply<unknown>
      expect(reply).toEqual({ ok: false, error: expect.objectContaining({ code: 'unauthorized' }) })
    }
    expect(engine.calls).toEqual([])
  })

  it('does not accept the token in the query string for commands', async () => {
    await start()
    const res = await fetch(`${base}/api/commands/batches:list?token=${server.token}`, {
      method: 'POST',
      body: '{}',
    })
    expect(res.status).toBe(401)
  })

  it('answers 404 with a Reply for an unknown command', async () => {
    await start()
    const res = await post('tasks:explode', {})
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({
      ok: false,
      error: { code: 'unknown_command', message: 'unknown command "tasks:explode"' },
    })
  })

  it('answers 400 for invalid input, naming the field, without calling the handler', async () => {
    await start()
    const res = await post('tasks:enqueue', { tasks: [{ type: '', payload: {} }] })
    expect(res.status).toBe(400)
    const reply = (await res.json()) as Reply<unknown>
    expect(reply.ok).toBe(false)
    if (!reply.ok) {
      expect(reply.error.code).toBe('invalid_input')
      expect(reply.error.field).toBe('tasks[0].type')
    }
    expect(engine.calls).toEqual([])
  })

  it('answers 400 for a body that is not JSON', async () => {
    await start()
    const res = await post('batches:list', '{not json')
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'invalid_json' } })
  })

  it('runs a valid command and answers the handler value as an ok Reply', async () => {
    await start()
    const res = await post('tasks:enqueue', {
      tasks: [
        { type: 'summarize', payload: { doc: 1 } },
        { type: 'summarize', payload: { doc: 2 } },
      ],
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await res.json()).toEqual({ ok: true, value: { batchId: 'batch-1', enqueued: 2 } })
    expect(engine.calls).toEqual([
      {
        channel: 'tasks:enqueue',
        input: {
          tasks: [
            { type: 'summarize', payload: { doc: 1 } },
            { type: 'summarize', payload: { doc: 2 } },
          ],
        },
      },
    ])
  })

  it('an empty body is an empty input', async () => {
    await start()
    const res = await post('batches:list', '')
    expect(await res.json()).toEqual({ ok: true, value: [] })
  })

  it('turns a domain error into data with its code and field (422)', async () => {
    await start()
    const res = await post('batches:pause', { batchId: 'b9' })
    expect(res.status).toBe(422)
    expect(await res.json()).toEqual({
      ok: false,
      error: { code: 'batch_not_found', message: 'no batch b9', field: 'batchId' },
    })
  })

  it('turns an unexpected error into code internal (500) without a stack', async () => {
    await start()
    const original = console.error
    console.error = () => undefined
    try {
      const res = await post('scheduler:get', {})
      expect(res.status).toBe(500)
      const text = await res.text()
      expect(JSON.parse(text)).toEqual({
        ok: false,
        error: { code: 'internal', message: 'database is on fire' },
      })
      expect(text).not.toMatch(/\bat .*\.ts:\d+/)
    } finally {
      console.error = original
    }
  })

  it('answers ledger:export over HTTP with use_download (the browser downloads /api/export)', async () => {
    await start()
    const res = await post('ledger:export', { kind: 'events' })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'use_download' } })
  })

  it('refuses a body over the limit with 413', async () => {
    await start({ maxBodyBytes: 1024 })
    const res = await post('batches:import', { fileName: 'a.jsonl', content: 'x'.repeat(4096) })
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'payload_too_large' } })
  })

  it('refuses a command from another origin even with the token', async () => {
    await start()
    const res = await fetch(`${base}/api/commands/batches:list`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.token}`, Origin: 'http://evil.example' },
      body: '{}',
    })
    expect(res.status).toBe(403)
    expect(engine.calls).toEqual([])
  })

  it('answers 405 for GET on a command', async () => {
    await start()
    const res = await fetch(`${base}/api/commands/batches:list`, {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
  })
})

describe('startHttpServer: events (SSE)', () => {
  it('refuses a stream without the token', async () => {
    await start()
    const res = await fetch(`${base}/api/events`)
    expect(res.status).toBe(401)
  })

  it('delivers an emitted event to a stream opened with ?token=', async () => {
    await start()
    const res = await fetch(`${base}/api/events?token=${server.token}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    const events = await readEvents(res, 1, () =>
      setTimeout(() => engine.emit('ledger:changed', { totals }), 20),
    )
    expect(events).toEqual([{ event: 'ledger:changed', data: { totals } }])
  })

  it('accepts the token as a bearer header and sends heartbeat events the page can see', async () => {
    await start({ heartbeatMs: 30 })
    const res = await fetch(`${base}/api/events`, {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    const events = await readEvents(res, 2)
    expect(events).toEqual([
      { event: 'heartbeat', data: {} },
      { event: 'heartbeat', data: {} },
    ])
  })

  it('unsubscribes from the engine when the client goes away', async () => {
    await start()
    expect(engine.listenerCount()).toBe(0)
    const controller = new AbortController()
    const res = await fetch(`${base}/api/events?token=${server.token}`, {
      signal: controller.signal,
    })
    expect(res.status).toBe(200)
    await until(() => engine.listenerCount() === EVENTS.length)
    controller.abort()
    await until(() => engine.listenerCount() === 0)
    expect(engine.listenerCount()).toBe(0)
  })

  it('close() ends open streams instead of hanging', async () => {
    await start()
    const res = await fetch(`${base}/api/events?token=${server.token}`)
    await until(() => engine.listenerCount() === EVENTS.length)
    const reading = readEvents(res, 5).catch(() => [])
    await server.close()
    await reading
    expect(engine.listenerCount()).toBe(0)
  })
})

describe('startHttpServer: CSV export', () => {
  it('streams text/csv as an attachment named pacer-events-YYYYMMDD.csv, with the filter', async () => {
    await start()
    const res = await fetch(
      `${base}/api/export?kind=events&since=1000&batchId=b1&token=${server.token}`,
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="pacer-events-\d{8}\.csv"$/,
    )
    expect(await res.text()).toBe(
      'ts,task_type,cost_usd\r\n1000,summarize,0.000\r\n1001,summarize,0.001\r\n1002,summarize,0.002\r\n',
    )
    expect(engine.exports).toEqual([{ kind: 'events', filter: { since: 1000, batchId: 'b1' } }])
  })

  it('names the summary file after its kind', async () => {
    await start()
    const res = await fetch(`${base}/api/export?kind=summary`, {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    expect(res.headers.get('content-disposition')).toMatch(/filename="pacer-summary-\d{8}\.csv"/)
  })

  it('refuses a bad kind or a non-numeric since with 400 naming the field', async () => {
    await start()
    const bad = await fetch(`${base}/api/export?kind=everything&token=${server.token}`)
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_input', field: 'kind' } })
    const since = await fetch(
      `${base}/api/export?kind=events&since=yesterday&token=${server.token}`,
    )
    expect(since.status).toBe(400)
    expect(await since.json()).toMatchObject({ error: { field: 'since' } })
    expect(engine.exports).toEqual([])
  })

  it('cuts the download when the export fails after rows went out (never a silently short CSV)', async () => {
    await start()
    engine.exportCsv = async (_kind, out) => {
      out.write('ts,cost\r\n'.repeat(2000))
      await new Promise((r) => setTimeout(r, 20))
      throw new Error('database is locked')
    }
    await server.close()
    server = await startHttpServer({
      handlers: engine.handlers,
      subscribe: engine.subscribe,
      exportCsv: engine.exportCsv,
      exportResults: engine.exportResults,
      rendererDir,
    })
    base = `http://127.0.0.1:${server.port}`
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const res = await fetch(`${base}/api/export?kind=events&token=${server.token}`)
    expect(res.status).toBe(200)
    await expect(res.text()).rejects.toThrow()
    log.mockRestore()
  })

  it('answers an export that fails before any row as a JSON error, not a CSV', async () => {
    await start()
    engine.exportCsv = async () => {
      throw Object.assign(new Error('the ledger is being migrated'), { code: 'ledger_busy' })
    }
    await server.close()
    server = await startHttpServer({
      handlers: engine.handlers,
      subscribe: engine.subscribe,
      exportCsv: engine.exportCsv,
      exportResults: engine.exportResults,
      rendererDir,
    })
    base = `http://127.0.0.1:${server.port}`
    const res = await fetch(`${base}/api/export?kind=events&token=${server.token}`)
    expect(res.status).toBe(422)
    expect(res.headers.get('content-disposition')).toBeNull()
    expect(await res.json()).toEqual({
      ok: false,
      error: { code: 'ledger_busy', message: 'the ledger is being migrated' },
    })
  })

  it('refuses an export without the token', async () => {
    await start()
    const res = await fetch(`${base}/api/export?kind=events`)
    expect(res.status).toBe(401)
    expect(engine.exports).toEqual([])
  })
})

describe('startHttpServer: static console', () => {
  it('serves index.html for / with the security headers', async () => {
    await start()
    const res = await fetch(`${base}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await res.text()).toBe(INDEX_HTML)
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
  })

  it('serves assets with their content types', async () => {
    await start()
    const js = await fetch(`${base}/assets/app.js`)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    const css = await fetch(`${base}/assets/app.css`)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404)
  })

  it.each([
    '/../secret.txt',
    '/assets/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/..%2fsecret.txt',
    '/assets/..%2f..%2fsecret.txt',
    '/%2e%2e%2fsecret.txt',
    '/..%5csecret.txt',
    `/${'..%2f'.repeat(12)}etc/passwd`,
    '/assets/%00../secret.txt',
    '/assets',
  ])('blocks directory traversal: %s', async (path) => {
    await start()
    const res = await raw(path)
    expect([400, 404]).toContain(res.status)
    expect(res.body).not.toContain(SECRET)
    expect(res.body).not.toContain('root:')
  })

  it('answers /favicon.ico with 204 when there is no icon, and serves the icon when given', async () => {
    await start()
    expect((await fetch(`${base}/favicon.ico`)).status).toBe(204)
    await server.close()
    await start({ faviconPath: join(dir, 'icon.png') })
    const res = await fetch(`${base}/favicon.ico`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
  })

  it('answers unknown /api routes with a 404 Reply', async () => {
    await start()
    const res = await fetch(`${base}/api/nothing`)
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'not_found' } })
  })
})

describe('startHttpServer: Host header (DNS rebinding)', () => {
  it('accepts 127.0.0.1, localhost and [::1] with the port', async () => {
    await start()
    for (const host of ['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST']) {
      const res = await raw('/', { Host: `${host}:${server.port}` })
      expect(res.status, host).toBe(200)
    }
  })

  it.each([
    'evil.example',
    'evil.example:PORT',
    '127.0.0.1',
    '127.0.0.1:1',
    'localhost.evil.example:PORT',
  ])('refuses Host %s with 403, on pages and on the API', async (hostTemplate) => {
    await start()
    const host = hostTemplate.replace('PORT', String(server.port))
    const page = await raw('/', { Host: host })
    expect(page.status).toBe(403)
    expect(page.body).not.toContain('Pacer')
    const events = await raw(`/api/events?token=${server.token}`, { Host: host })
    expect(events.status).toBe(403)
    expect(engine.listenerCount()).toBe(0)
  })

  it('bound for remote use, still refuses a Host that names no address bound here', async () => {
    await start({ host: '0.0.0.0', allowNonLoopback: true })
    const res = await raw(`/?token=${server.token}`, { Host: `pacer.example:${server.port}` })
    expect(res.status).toBe(403)
    const mine = await raw(`/?token=${server.token}`, { Host: `127.0.0.1:${server.port}` })
    expect(mine.status).toBe(200)
  })
})
