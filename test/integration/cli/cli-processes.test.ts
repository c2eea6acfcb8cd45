// Several real `pacer run` processes on one database file: each distinct task runs once between
// them, a killed owner's task is taken over by the rerun at once, and a stale owner cannot
// overwrite.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { query, runPacer, shuffle, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'

interface LedgerRow {
  fp: string
  outcome: string
  worker: string
  epoch: number | null
  task_id: number
  cost_micros: number | null
  input_tokens: number
  step: number
  reason: string | null
}

describe('pacer run across processes', () => {
  it('4 processes on one batch of 400 tasks (half duplicates, shuffled) execute each distinct task once', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const distinct = Array.from({ length: 200 }, (_, i) => ({
      type: i % 3 === 0 ? 'summarize' : 'classify',
      payload: { doc: i, text: `document number ${i}`, tags: ['a', 'b'] },
      ...(i % 10 === 0 ? { steps: 3 } : {}),
    }))
    // The duplicates list their keys in another order: the fingerprint must not care.
    const duplicates = distinct.map((t) => ({
      ...t,
      payload: { tags: t.payload.tags, text: t.payload.text, doc: t.payload.doc },
    }))
    const file = writeJsonl(dir, 'batch.jsonl', shuffle([...distinct, ...duplicates], 7))

    const runs = await Promise.all(
      Array.from({ length: 4 }, () =>
        runPacer(['run', file, '--db', db, '--json', '--sim-latency-scale', '0.05']),
      ),
    )
    const summaries = runs.map((r) => {
      expect(r.code, r.stderr).toBe(0)
      return JSON.parse(r.stdout) as RunSummary
    })
    for (const s of summaries) {
      expect(s.tasks).toBe(400)
      expect(s.distinct).toBe(200)
      expect(s.failed).toBe(0)
      expect(s.executed + s.reused).toBe(400)
    }
    expect(summaries.reduce((n, s) => n + s.executed, 0)).toBe(200)
    expect(summaries.reduce((n, s) => n + s.reused, 0)).toBe(1400)

    // The ledger agrees: one execution per fingerprint, every other task a reuse.
    const executions = query<{ fp: string; n: number }>(
      db,
      `SELECT fp, COUNT(DISTINCT task_id || ':' || epoch) AS n FROM ledger
       WHERE outcome='executed' GROUP BY fp`,
    )
    expect(executions).toHaveLength(200)
    expect(executions.every((e) => e.n === 1)).toBe(true)
    const [reused] = query<{ n: number }>(
      db,
      `SELECT COUNT(*) AS n FROM ledger WHERE outcome='reused'`,
    )
    expect(reused!.n).toBe(1400)
    const [dups] = query<{ n: number }>(
      db,
      `SELECT COUNT(*) AS n FROM ledger WHERE outcome='duplicate'`,
    )
    expect(dups!.n).toBe(0)
    const statuses = query<{ status: string; n: number }>(
      db,
      'SELECT status, COUNT(*) AS n FROM tasks GROUP BY status ORDER BY status',
    )
    expect(statuses).toEqual([
      { status: 'reused', n: 1400 },
      { status: 'succeeded', n: 200 },
    ])
    // Multi-step tasks: 3 calls each, each resending the history.
    const steps = query<{ n: number }>(
      db,
      `SELECT COUNT(*) AS n FROM ledger WHERE outcome='executed' AND step=3`,
    )
    expect(steps[0]!.n).toBe(20)

    // `pacer summary --json` rolls up the same ledger.
    const summary = await runPacer(['summary', '--db', db, '--json'])
    expect(summary.code, summary.stderr).toBe(0)
    const rollup = JSON.parse(summary.stdout) as {
      byType: { taskType: string; executed: number; reused: number; runs: number }[]
      totals: { executed: number; reused: number; runs: number }
    }
    expect(rollup.totals.executed).toBe(200)
    expect(rollup.totals.reused).toBe(1400)
    expect(rollup.byType.map((t) => t.taskType).sort()).toEqual(['classify', 'summarize'])
  })

  it('a process killed with SIGKILL mid-call is taken over at once by the rerun; the task completes once', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'one.jsonl', [
      { type: 'agent', steps: 2, payload: { prompt: 'a slow task' } },
    ])
    // ~10 s per call and a lease far longer than the test: the first owner is killed while its
    // call is in flight, and the rerun knows it is gone (its pid is not running), so it resumes
    // the batch and takes the claim over without waiting for the lease.
    const first = startPacer([
      'run',
      file,
      '--db',
      db,
      '--lease',
      '600',
      '--sim-latency-scale',
      '160',
    ])
    const owner = await until(() => {
      const rows = query<{ owner: string; state: string }>(db, 'SELECT owner, state FROM claims')
      return rows[0]?.state === 'running' ? rows[0].owner : undefined
    })
    // Killed once its first call is sent: the intent committed before the request went out.
    await until(() => query(db, 'SELECT 1 FROM call_journal WHERE idx = 1 AND state = 0').length)
    first.child.kill('SIGKILL')
    const killed = await first.done
    expect(killed.signal).toBe('SIGKILL')

    const second = await runPacer([
      'run',
      file,
      '--db',
      db,
      '--json',
      '--lease',
      '600',
      '--sim-latency-scale',
      '0.05',
    ])
    expect(second.code, second.stderr).toBe(0)
    const summary = JSON.parse(second.stdout) as RunSummary
    expect(summary.resumed).toBe(true)
    expect(summary.executed).toBe(1)
    expect(summary.abandoned).toBe(1)

    const claims = query<{ owner: string; epoch: number; state: string }>(
      db,
      'SELECT owner, epoch, state FROM claims',
    )
    expect(claims).toHaveLength(1)
    expect(claims[0]!.state).toBe('completed')
    expect(claims[0]!.epoch).toBe(2)
    expect(claims[0]!.owner).not.toBe(owner)

    const ledger = query<LedgerRow>(db, 'SELECT * FROM ledger ORDER BY id')
    const abandoned = ledger.filter((r) => r.outcome === 'abandoned')
    expect(abandoned).toHaveLength(1)
    expect(abandoned[0]!.worker).toBe(owner)
    expect(abandoned[0]!.epoch).toBe(1)
    // Call 1 was in flight when its owner died (its intent was in the journal): the new owner
    // sends it again (executed, epoch 2) and puts the lost payment on the ledger as a duplicate
    // of its own (no epoch: what it wasted is that call, at the same request's usage); call 2 is
    // executed by the new owner only.
    const paid = ledger
      .filter((r) => r.outcome === 'executed' || r.outcome === 'duplicate')
      .map((r) => [r.step, r.outcome, r.epoch, r.reason])
    expect(paid).toEqual([
      [1, 'executed', 2, null],
      [1, 'duplicate', null, 'answer lost'],
      [2, 'executed', 2, null],
    ])
    // One batch: the killed run's, resumed and done.
    const tasks = query<{ status: string; state: string }>(
      db,
      'SELECT t.status, b.state FROM tasks t JOIN batches b ON b.id = t.batch_id ORDER BY t.id',
    )
    expect(tasks).toEqual([{ status: 'succeeded', state: 'done' }])
  })

  it('a stale owner (lease expired, taken over) finishing late cannot overwrite the result', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'one.jsonl', [{ type: 'agent', payload: { prompt: 'contested' } }])
    const stale = startPacer([
      'run',
      file,
      '--db',
      db,
      '--json',
      '--lease',
      '1',
      '--sim-latency-scale',
      '40',
    ])
    const staleOwner = await until(() => {
      const rows = query<{ owner: string; state: string }>(db, 'SELECT owner, state FROM claims')
      return rows[0]?.state === 'running' ? rows[0].owner : undefined
    })
    // Frozen mid-call: it stops renewing, its lease expires, and another process takes over.
    stale.child.kill('SIGSTOP')
    try {
      await until(
        () =>
          query<{ lease_until: number }>(db, 'SELECT lease_until FROM claims')[0]!.lease_until <
          Date.now() - 50,
      )
      const winner = await runPacer([
        'run',
        file,
        '--db',
        db,
        '--json',
        '--lease',
        '1',
        '--sim-latency-scale',
        '0.05',
      ])
      expect(winner.code, winner.stderr).toBe(0)
    } finally {
      stale.child.kill('SIGCONT')
    }
    const before = query<{ owner: string; epoch: number; result: string; completed_at: number }>(
      db,
      'SELECT owner, epoch, result, completed_at FROM claims',
    )[0]!
    expect(before.epoch).toBe(2)
    expect(before.owner).not.toBe(staleOwner)

    const late = await stale.done
    expect(late.code, late.stderr).toBe(0)
    const after = query<{ owner: string; epoch: number; result: string; completed_at: number }>(
      db,
      'SELECT owner, epoch, result, completed_at FROM claims',
    )[0]!
    expect(after).toEqual(before)

    // The late call was still billed: on the ledger as a duplicate (wasted), not as the result.
    const ledger = query<LedgerRow>(db, 'SELECT * FROM ledger ORDER BY id')
    const duplicate = ledger.filter((r) => r.outcome === 'duplicate')
    expect(duplicate).toHaveLength(1)
    expect(duplicate[0]!.worker).toBe(staleOwner)
    expect(duplicate[0]!.epoch).toBe(1)
    expect(duplicate[0]!.cost_micros).toBeGreaterThan(0)
    const task = query<{ status: string; result: string }>(db, 'SELECT status, result FROM tasks')
    expect(task).toHaveLength(1)
    expect(task[0]!.status).toBe('succeeded')
    expect(task[0]!.result).toBe(after.result)
  })
})
