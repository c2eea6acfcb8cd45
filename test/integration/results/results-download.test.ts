// GET /api/results: a batch's answers as a download over the headless transport, behind the
// session token like every /api route; an unknown batch is a JSON error, never a file; and the
// command channel points at the download, as it does for the ledger export.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startHttpServer, type HttpServerHandle } from '../../../src/main/server/http-server'
import { createFakeEngine, type FakeEngine } from '../../helpers/fake-engine'

let dir: string
let engine: FakeEngine
let server: HttpServerHandle
let base: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pacer-results-http-'))
  engine = createFakeEngine()
  server = await startHttpServer({
    handlers: engine.handlers,
    subscribe: engine.subscribe,
    exportCsv: engine.exportCsv,
    exportResults: engine.exportResults,
    rendererDir: dir,
  })
  base = `http://127.0.0.1:${server.port}`
})
afterEach(async () => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

const auth = () => ({ authorization: `Bearer ${server.token}` })

describe('GET /api/results', () => {
  it('streams the answers as a dated download, with the options of the query', async () => {
    const res = await fetch(`${base}/api/results?batchId=b1&format=csv&raw=1`, { headers: auth() })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="pacer-results-\d{8}\.csv"$/,
    )
    expect(await res.text()).toBe('{"line":1,"text":"an answer"}\n')
    expect(engine.resultExports).toEqual([{ batchId: 'b1', format: 'csv', raw: true }])
  })

  it('defaults to JSONL of the latest batch; an unknown batch is a JSON error', async () => {
    const latest = await fetch(`${base}/api/results?token=${server.token}`)
    expect(latest.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8')
    await latest.text()
    expect(engine.resultExports).toEqual([{ format: 'jsonl' }])
    const missing = await fetch(`${base}/api/results?batchId=missing`, { headers: auth() })
    expect(missing.status).toBe(422)
    expect(missing.headers.get('content-disposition')).toBeNull()
    expect(await missing.json()).toMatchObject({ ok: false, error: { code: 'unknown_batch' } })
  })

  it('refuses a bad format by name, and a request without the token', async () => {
    const bad = await fetch(`${base}/api/results?format=xml`, { headers: auth() })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: { field: 'format' } })
    const anonymous = await fetch(`${base}/api/results`)
    expect(anonymous.status).toBe(401)
    expect(engine.resultExports).toEqual([])
  })

  it('the command channel answers results:export with use_download', async () => {
    const res = await fetch(`${base}/api/commands/results:export`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"format":"jsonl"}',
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({
      ok: false,
      error: { code: 'use_download', message: expect.stringContaining('/api/results') },
    })
  })
})
