// The headless transport end to end: a real node:http server on a free loopback port, real fetch
// and raw node:http requests (for the Host header and unnormalized paths fetch would fix up).
// Here the CSV export: the download, its name and filter, bad input, a failure before or after rows.
import { describe, expect, it, vi } from 'vitest'
import { base, engine, restart, server, start, useHttpServer } from './http-server-harness'

useHttpServer()

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
      // Fails only once the rows were handed to the socket: the download has begun.
      await new Promise<void>((r) => out.write('ts,cost\r\n'.repeat(2000), () => r()))
      throw new Error('database is locked')
    }
    await restart()
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
    await restart()
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
