// Batches that resume at once (issue 10, point 3): a `pacer run` stopped with Ctrl-C or killed
// with kill -9 at a random moment, then run again at once, resumes its batch (the killed run's
// tasks and claims taken over without waiting for their leases), and the ledger counts each line
// of the file once. Real processes on the sim provider.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { EXIT } from '../../../src/main/cli/exit-codes'
import { query, runPacer, shuffle, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'
import { seededRandom } from '../../helpers/random'
import { assertCallsOnce, assertResumedOnce, type FileShape } from '../../helpers/resume-checks'

// Leases far longer than the test: anything that waited for one would time the test out.
const LEASE = ['--lease', '600']
// Slow enough that a run is still under way when it is stopped (a 10-step task takes seconds).
const SLOW = ['--sim-latency-scale', '1', ...LEASE]
const FAST = ['--sim-latency-scale', '0.05', ...LEASE]

/** 200 lines: 3- and 10-step tasks, 40 of them a second time (the same payload, keys reordered). */
function batchFile(dir: string): { path: string; shape: FileShape } {
  const distinct = Array.from({ length: 160 }, (_, i) => ({
    type: i % 4 === 0 ? 'research' : 'agent',
    steps: i % 3 === 0 ? 10 : 3,
    payload: { n: i, topic: `topic ${i}` },
  }))
  const twice = distinct
    .slice(0, 40)
    .map((t) => ({ ...t, payload: { topic: t.payload.topic, n: t.payload.n } }))
  const path = writeJsonl(dir, 'agents.jsonl', shuffle([...distinct, ...twice], 11))
  return { path, shape: { lines: 200, distinct: 160 } }
}

/** Tasks of the database's batches finished so far (0 before the first run made it). */
function finished(db: string): number {
  if (!existsSync(db)) return 0
  const rows = query<{ n: number }>(
    db,
    `SELECT COUNT(*) AS n FROM tasks WHERE status IN ('succeeded', 'reused')`,
  )
  return rows[0]?.n ?? 0
}

/** Starts the file's run and stops it with `signal` once `after` tasks finished (a random count). */
async function interrupted(
  file: string,
  db: string,
  signal: NodeJS.Signals,
  after: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; pid: number }> {
  const run = startPacer(['run', file, '--db', db, ...SLOW])
  const start = finished(db)
  await until(() => finished(db) >= start + after, 60_000)
  run.child.kill(signal)
  const end = await run.done
  return { code: end.code, signal: end.signal, pid: run.child.pid! }
}

const abandonedRows = (db: string) =>
  query<{ n: number }>(db, `SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'abandoned'`)[0]!.n

async function rerun(file: string, db: string): Promise<RunSummary> {
  const r = await runPacer(['run', file, '--db', db, '--json', ...FAST])
  expect(r.code, r.stderr).toBe(EXIT.done)
  return JSON.parse(r.stdout) as RunSummary
}

describe('a batch stopped at a random moment and run again', () => {
  const random = seededRandom(Number(process.env.RESUME_SEED ?? 20261201))

  it('after Ctrl-C the same command resumes the one batch; each line counted once', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const { path, shape } = batchFile(dir)
    const stopped = await interrupted(path, db, 'SIGINT', 5 + Math.floor(random() * 40))
    expect(stopped.code).toBe(EXIT.interrupted)
    const summary = await rerun(path, db)
    expect(summary.resumed).toBe(true)
    expect(summary.tasks).toBe(shape.lines)
    await assertResumedOnce(db, shape)
    assertCallsOnce(db, 'sigint')
  })

  it('after kill -9 the same command at once resumes it: no new batch, no lease waited for', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const { path, shape } = batchFile(dir)
    const killed = await interrupted(path, db, 'SIGKILL', 5 + Math.floor(random() * 40))
    expect(killed.signal).toBe('SIGKILL')
    // Before anything repairs it, the batch is listed as interrupted, its run gone.
    const listed = await runPacer(['batches', '--db', db])
    expect(listed.stdout).toMatch(/interrupted/)
    expect(listed.stdout).toContain(`${killed.pid}@`)
    expect(listed.stdout).toContain(`(pid ${killed.pid} on `)
    const summary = await rerun(path, db)
    expect(summary.resumed).toBe(true)
    await assertResumedOnce(db, shape)
    // A killed execution had at most one call in flight: each left an abandoned row.
    assertCallsOnce(db, { sigkill: abandonedRows(db) })
    // The killed run's claims were taken over by the usual compare-and-set, one epoch up.
    const takenOver = query<{ n: number }>(db, `SELECT COUNT(*) AS n FROM claims WHERE epoch > 1`)
    expect(takenOver[0]!.n).toBe(summary.abandoned)
  })

  it('five kill -9 in a row, then a rerun: still one batch, nothing left running', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const { path, shape } = batchFile(dir)
    for (let i = 0; i < 5; i++) {
      const killed = await interrupted(path, db, 'SIGKILL', 1 + Math.floor(random() * 10))
      expect(killed.signal).toBe('SIGKILL')
    }
    const batches = query<{ state: string }>(db, 'SELECT state FROM batches')
    expect(batches).toHaveLength(1)
    await rerun(path, db)
    await assertResumedOnce(db, shape)
    assertCallsOnce(db, { sigkill: abandonedRows(db) })
    expect(query(db, `SELECT * FROM tasks WHERE status = 'running'`)).toEqual([])
  })

  it('while its run is alive, a second run of the file says which process runs it', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const { path } = batchFile(dir)
    const first = startPacer(['run', path, '--db', db, ...SLOW])
    try {
      await until(() => finished(db) >= 1, 60_000)
      const second = await runPacer(['run', path, '--db', db, ...FAST])
      expect(second.code, second.stderr).toBe(EXIT.done)
      const said = second.stderr.split('\n').filter((l) => l.includes('is being run by'))
      expect(said).toHaveLength(1)
      expect(said[0]).toMatch(new RegExp(`is being run by pid ${first.child.pid} on \\S+:`))
    } finally {
      first.child.kill('SIGINT')
      await first.done
    }
  })
})
