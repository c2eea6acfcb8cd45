// Issue 11, exact input over the HTTP API: a task POSTed with numbers a double cannot hold is
// stored with its digits (a real engine on a temp database behind a real loopback server), and a
// body that is not UTF-8 is refused with its line and byte before any handler runs.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import { startHttpServer, type HttpServerHandle } from '../../../src/main/server/http-server'
import { query, tempDir } from '../../helpers/cli'

let engine: Engine
let server: HttpServerHandle
let db: string

async function start() {
  db = join(tempDir('pacer-http-exact-'), 'pacer.db')
  engine = createEngine({ dbPath: db })
  server = await startHttpServer({
    handlers: engine.handlers,
    subscribe: engine.subscribe,
    exportCsv: engine.exportCsv,
    exportResults: engine.exportResults,
    rendererDir: tempDir('pacer-http-renderer-'),
  })
}

afterEach(async () => {
  await server?.close()
  await engine?.shutdown()
})

function post(channel: string, body: string | Buffer) {
  return fetch(`http://127.0.0.1:${server.port}/api/commands/${channel}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${server.token}` },
    body,
  })
}

describe('exact input over HTTP', () => {
  it('stores the digits of a POSTed task: two bigints are two tasks, params as written', async () => {
    await start()
    const res = await post(
      'tasks:enqueue',
      '{"tasks":[{"type":"t","payload":{"id":9007199254740993}},{"type":"t","payload":{"id":9007199254740992}},' +
        '{"type":"t","payload":{"x":1e-400},"params":{"temperature":0.70000000000000001}}],"name":"api"}',
    )
    expect(await res.json()).toMatchObject({ ok: true, value: { enqueued: 3 } })
    const rows = query<{ payload: string; params: string | null }>(
      db,
      'SELECT payload, params FROM tasks ORDER BY seq',
    )
    expect(rows).toEqual([
      { payload: '{"id":9007199254740993}', params: null },
      { payload: '{"id":9007199254740992}', params: null },
      { payload: '{"x":1e-400}', params: '{"temperature":0.70000000000000001}' },
    ])
  })

  it('refuses a body that is not UTF-8 with its line and byte', async () => {
    await start()
    const body = Buffer.from('{"tasks":[\n{"type":"t","payload":"caf\xe9"}]}', 'latin1')
    const res = await post('tasks:enqueue', body)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      ok: false,
      error: {
        code: 'invalid_json',
        message: 'body is not UTF-8: line 2, byte 27: invalid UTF-8 (0xE9)',
      },
    })
    expect(query(db, 'SELECT * FROM tasks')).toEqual([])
  })
})
