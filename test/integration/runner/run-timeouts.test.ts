// `pacer run --timeout` against a loopback server that accepts a request and never answers: the
// call is aborted at its deadline (seen from the server: the connection closes), ledgered as a
// timeout, retried once, and the batch ends with the task failed for that reason.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { createEngine } from '../../../src/main/engine/app/engine'
import { query, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, type FakeVendor } from '../../helpers/fake-vendor'

afterEach(closeVendors)

async function hungServer(): Promise<{ server: FakeVendor; db: string; file: string }> {
  const server = await fakeVendor({ failures: { key: 'k', models: ['m'], trouble: 'hang' } })
  const dir = tempDir('pacer-timeout-')
  const db = join(dir, 'pacer.db')
  const engine = createEngine({ dbPath: db })
  await engine.handlers['settings:set']({ baseUrls: { 'openai-compatible': server.baseUrl } })
  await engine.shutdown()
  const file = writeJsonl(dir, 'batch.jsonl', [{ type: 'summarize', payload: { doc: 1 } }])
  return { server, db, file }
}

const args = (file: string, db: string, ...more: string[]) => [
  'run',
  file,
  '--db',
  db,
  '--provider',
  'openai-compatible',
  '--model',
  'm',
  ...more,
]

describe('pacer run --timeout', () => {
  it('a hung call is aborted at the timeout, ledgered as one, retried once; the batch ends', async () => {
    const { server, db, file } = await hungServer()
    const r = await runPacer(args(file, db, '--timeout', '2'))
    expect(r.code, r.stderr).toBe(1)

    // The server saw each connection close at the 2 s timeout: not before 1 s, and long before the
    // 120 s default (a late timer on a loaded machine may add seconds, not minutes).
    expect(server.requests.length).toBe(2)
    for (const h of server.hung) {
      expect(h.closed).not.toBeNull()
      expect(h.closed! - h.arrived).toBeGreaterThanOrEqual(1000)
      expect(h.closed! - h.arrived).toBeLessThan(10_000)
    }
    const ledger = query<{ outcome: string; status: number | null; latency_ms: number }>(
      db,
      'SELECT outcome, status, latency_ms FROM ledger ORDER BY id',
    )
    expect(ledger.map((row) => [row.outcome, row.status])).toEqual([
      ['timeout', null],
      ['timeout', null],
    ])
    for (const row of ledger) {
      expect(row.latency_ms).toBeGreaterThanOrEqual(1000)
      expect(row.latency_ms).toBeLessThan(10_000)
    }

    const reason = 'timeout: gave up after 2 calls with no answer within 2000 ms'
    expect(query(db, 'SELECT status, error FROM tasks')).toEqual([
      { status: 'failed', error: reason },
    ])
    expect(query(db, 'SELECT state FROM batches')).toEqual([{ state: 'done' }])
    // The closing summary groups the failure with its example task.
    expect(r.stderr).toContain('failed tasks by reason (1):')
    expect(r.stderr).toContain(`1 × ${reason} (e.g. line 1, summarize)`)
    // Timeouts count among the errors of the rollups.
    const summary = await runPacer(['summary', '--db', db, '--json'])
    expect(JSON.parse(summary.stdout).totals).toMatchObject({ errors: 2 })
  })

  it('--json lists the failures by reason; the setting is the default deadline', async () => {
    const { server, db, file } = await hungServer()
    const engine = createEngine({ dbPath: db })
    const view = await engine.handlers['settings:set']({ callTimeoutSeconds: 1 })
    expect(view.callTimeoutSeconds).toBe(1)
    await engine.shutdown()

    const r = await runPacer(args(file, db, '--json'))
    expect(r.code, r.stderr).toBe(1)
    const s = JSON.parse(r.stdout) as RunSummary
    expect(s.failures).toEqual([
      {
        reason: 'timeout: gave up after 2 calls with no answer within 1000 ms',
        tasks: 1,
        example: { line: 1, type: 'summarize' },
      },
    ])
    expect(s).toMatchObject({ failed: 1, stopped: [], queued: 0 })
    expect(server.requests.length).toBe(2)
  })

  it('refuses a timeout that is not a positive number of seconds', async () => {
    const r = await runPacer(['run', 'x.jsonl', '--timeout', '0'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--timeout.*expected a number between 0.001 and 86400, got "0"/)
  })
})
