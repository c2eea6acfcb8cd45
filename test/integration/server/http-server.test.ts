// The headless transport end to end: a real node:http server on a free loopback port, real fetch
// and raw node:http requests (for the Host header and unnormalized paths fetch would fix up).
// Here binding and commands; events, the CSV export and the static console in http-server-*.test.ts.
import { beforeAll, describe, expect, it } from 'vitest'
import { startHttpServer } from '../../../src/main/server/http-server'
import type { Reply } from '../../../src/shared/contract'
import { createFakeEngine } from '../../helpers/fake-engine'
import {
  base,
  engine,
  post,
  rendererDir,
  server,
  start,
  useHttpServer,
} from './http-server-harness'

useHttpServer()

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
