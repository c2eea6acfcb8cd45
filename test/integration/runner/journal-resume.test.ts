// What resume guarantees, with real `pacer run` processes: a batch of multi-step tasks interrupted
// by Ctrl-C and run again pays each call of each execution once (the calls answered before the
// interruption are replayed from the journal, at no cost, their cost saved), and a task whose step
// 2 failed replays step 1 on the rerun instead of sending it again (a loopback OpenAI-speaking
// server counts what it receives).
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { query, runPacer, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'
import {
  closeVendors,
  useVendor,
  vendorEnv,
  fakeVendor,
  vendorAnswer,
  vendorUsage,
} from '../../helpers/fake-vendor'

afterEach(closeVendors)

interface Row {
  fp: string
  step: number
  outcome: string
  cost_micros: number | null
  saved_micros: number | null
}

describe('pacer run: the call journal across Ctrl-C and failures', () => {
  it('Ctrl-C mid-batch, then the same command: one executed row per (execution, call index)', async () => {
    const dir = tempDir('pacer-journal-')
    const db = join(dir, 'pacer.db')
    // 3- and 10-step tasks, with duplicates (every fifth line repeats an earlier one).
    const tasks = Array.from({ length: 24 }, (_, i) => {
      const n = i % 5 === 4 ? i - 4 : i
      return { type: 'agent', steps: n % 2 === 0 ? 10 : 3, payload: { n } }
    })
    const file = writeJsonl(dir, 'agents.jsonl', tasks)
    const first = startPacer(['run', file, '--db', db, '--json', '--sim-latency-scale', '2'])
    // Interrupt once some multi-step tasks are between their steps.
    await until(
      () =>
        query<{ n: number }>(
          db,
          `SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed' AND step >= 2`,
        )[0]!.n >= 6,
    )
    first.child.kill('SIGINT')
    const r1 = await first.done
    expect(r1.code, r1.stderr).toBe(130)
    const paidBefore = query<Row>(db, `SELECT fp, step FROM ledger WHERE outcome = 'executed'`)

    const r2 = await runPacer(['run', file, '--db', db, '--json', '--sim-latency-scale', '0.05'])
    expect(r2.code, r2.stderr).toBe(0)
    expect(JSON.parse(r2.stdout)).toMatchObject({ resumed: true, tasks: 24 })

    const rows = query<Row>(
      db,
      'SELECT fp, step, outcome, cost_micros, saved_micros FROM ledger ORDER BY id',
    )
    const executed = rows.filter((r) => r.outcome === 'executed')
    const distinct = new Map<string, number>()
    for (const t of tasks) distinct.set(JSON.stringify(t.payload), t.steps)
    const calls = [...distinct.values()].reduce((a, b) => a + b, 0)
    // Every call of every distinct execution paid exactly once, over both runs.
    const perCall = new Map<string, number>()
    for (const r of executed)
      perCall.set(`${r.fp}:${r.step}`, (perCall.get(`${r.fp}:${r.step}`) ?? 0) + 1)
    expect(perCall.size).toBe(calls)
    expect([...perCall.values()].every((n) => n === 1)).toBe(true)
    expect(rows.filter((r) => r.outcome === 'duplicate')).toEqual([])
    // What the rerun took from the journal: replayed, free, each saving what its call cost.
    const replayed = rows.filter((r) => r.outcome === 'replayed')
    expect(replayed.length).toBeGreaterThan(0)
    const costOf = new Map(executed.map((r) => [`${r.fp}:${r.step}`, r.cost_micros]))
    for (const r of replayed) {
      expect(r.cost_micros).toBe(0)
      expect(r.saved_micros).toBe(costOf.get(`${r.fp}:${r.step}`))
      // Only calls paid before the interruption can be replayed.
      expect(paidBefore.some((p) => p.fp === r.fp && p.step === r.step)).toBe(true)
    }
    // The summary counts them and puts them in what was saved.
    const summary = await runPacer(['summary', '--db', db, '--json'])
    expect(summary.code, summary.stderr).toBe(0)
    const totals = JSON.parse(summary.stdout) as {
      replayed?: number
      totals?: { replayed: number }
    }
    expect(JSON.stringify(totals)).toContain(`"replayed":${replayed.length}`)
    // Nothing left in the journal: every execution's result is stored.
    expect(query(db, 'SELECT * FROM call_journal')).toEqual([])
  })

  it('a task whose step 2 failed replays step 1 on the rerun: the server sees it once', async () => {
    let failing = true
    const server = await fakeVendor({
      dialect: 'openai',
      answer: (req) => {
        const turns = (req.body['messages'] as unknown[]).length
        // Step 2 resends step 1's turn: three messages. Until fixed, the server fails it.
        if (failing && turns >= 3) return { status: 500, body: { error: { message: 'down' } } }
        return {
          body: vendorAnswer('openai', `answer after ${turns}`, vendorUsage('openai', 100, 20)),
        }
      },
    })
    const dir = tempDir('pacer-journal-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, server, { provider: 'openai' })
    const file = writeJsonl(dir, 'one.jsonl', [
      { type: 'agent', steps: 3, payload: { prompt: 'plan a trip' } },
    ])
    const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-5-mini']
    const r1 = await runPacer([...args, '--json'], vendorEnv('openai', server))
    expect(r1.code, r1.stderr).not.toBe(0)
    const step1 = server.requests.filter((r) => (r.body['messages'] as unknown[]).length === 1)
    expect(step1).toHaveLength(1)

    failing = false
    const r2 = await runPacer([...args, '--json'], vendorEnv('openai', server))
    expect(r2.code, r2.stderr).toBe(0)
    // Step 1 was not sent again; steps 2 and 3 were.
    const byTurns = server.requests.map((r) => (r.body['messages'] as unknown[]).length)
    expect(byTurns.filter((n) => n === 1)).toHaveLength(1)
    expect(byTurns.filter((n) => n === 5)).toHaveLength(1)
    const rows = query<Row>(
      db,
      `SELECT step, outcome, cost_micros, saved_micros FROM ledger
      WHERE outcome IN ('executed', 'replayed') ORDER BY id`,
    )
    expect(rows.map((r) => [r.step, r.outcome])).toEqual([
      [1, 'executed'],
      [1, 'replayed'],
      [2, 'executed'],
      [3, 'executed'],
    ])
    expect(rows[1]!.saved_micros).toBe(rows[0]!.cost_micros)
    // Step 2 of the rerun carried step 1's answer, as the first run would have.
    const resent = server.requests.find(
      (r) => !failing && (r.body['messages'] as unknown[]).length === 3,
    )
    expect(JSON.stringify(resent?.body['messages'])).toContain('answer after 1')
  })
})
