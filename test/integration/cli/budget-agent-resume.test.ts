// A journaled agent stopped by the run's cap mid-task (issue 21, item 6): `pacer run --budget`
// stops it between two ctx.chat calls of a task (exit 5), and the rerun with a higher --budget
// resumes that task from its journal: every distinct call reached the loopback vendor exactly once
// (the first calls replayed, not repaid), and the ledger's sum is the vendor's bill.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { query, runOnVendor, tempDir, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor } from '../../helpers/fake-vendor'

afterEach(closeVendors)

// USD per 1M tokens = micro-dollars per token: the vendor's bill is integer arithmetic.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
// Every call is billed 10 input and 50 output tokens: 510 µ$. A call reserves its input estimate
// plus 60 output tokens (--max-tokens) at 600 µ$: roughly 620 µ$.
const USAGE = { input: 10, output: 50 }
const CALL_MICROS = USAGE.input * PRICE.input + USAGE.output * PRICE.output
const TASKS = 3
const CALLS_PER_TASK = 3
// One call at a time: call k is admitted while (k − 1)·510 + ~620 ≤ cap. 2,300 µ$ admits the
// fourth call (1,530 + ~620) and stops the fifth (2,040 + ~620): four calls of three per task
// leave a task stopped after some but not all of its calls, whichever order they came in.
const CAP_USD = 0.0023

/** Three ctx.chat calls per task, each prompt its own (the vendor counts answers per prompt). */
const AGENT = `export default {
  async research(task, ctx) {
    const texts = []
    for (let k = 1; k <= ${CALLS_PER_TASK}; k++) {
      const messages = [{ role: 'user', content: task.payload.q + '/call-' + k }]
      if (texts.length) messages.push({ role: 'assistant', content: texts.at(-1) }, { role: 'user', content: 'go on' })
      texts.push((await ctx.chat({ messages })).text)
    }
    return { q: task.payload.q, texts }
  },
}
`

const FLAGS = ['--max-tokens', '60', '--initial-concurrency', '1', '--max-concurrency', '1']

describe('pacer run --budget with a journaled agent', () => {
  it('stops a task between its calls (exit 5), and a higher cap resumes it from its journal, no call repaid', async () => {
    const vendor = await fakeVendor({ dialect: 'openai', usage: USAGE })
    const dir = tempDir('pacer-budget-agent-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor, { prices: { local: PRICE } })
    const agent = join(dir, 'agent.mjs')
    writeFileSync(agent, AGENT)
    const file = writeJsonl(
      dir,
      'batch.jsonl',
      Array.from({ length: TASKS }, (_, i) => ({ type: 'research', payload: { q: `topic-${i}` } })),
    )
    const args = ['--agents', agent, ...FLAGS]
    const bill = () => vendor.answers.length * CALL_MICROS
    const ledgerSum = () =>
      query<{ cost: number }>(db, 'SELECT COALESCE(SUM(cost_micros), 0) AS cost FROM ledger')[0]!
        .cost

    const first = await runOnVendor(file, db, [...args, '--budget', String(CAP_USD)]).done
    expect(first.code, first.stderr).toBe(5)
    expect(first.stderr).toMatch(/stopped by the run's budget: /)
    expect(vendor.answers.length).toBe(4)
    expect(bill()).toBeLessThanOrEqual(CAP_USD * 1e6)
    expect(ledgerSum()).toBe(bill())
    expect(query(db, 'SELECT * FROM budget_reservations')).toEqual([])
    // A task stopped mid-way: not done, its answered calls on the journal.
    const midway = query<{ task_id: number; calls: number }>(
      db,
      `SELECT j.task_id, COUNT(*) AS calls FROM call_journal j JOIN tasks t ON t.id = j.task_id
       WHERE j.kind = 1 AND j.state = 1 AND t.status <> 'succeeded' GROUP BY j.task_id`,
    )
    expect(midway.length).toBeGreaterThan(0)
    for (const m of midway) expect(m.calls).toBeLessThan(CALLS_PER_TASK)
    expect(query(db, "SELECT * FROM tasks WHERE status = 'failed'")).toEqual([])

    const second = await runOnVendor(file, db, [...args, '--budget', '1']).done
    expect(second.code, second.stderr).toBe(0)
    expect(query(db, "SELECT COUNT(*) AS n FROM tasks WHERE status = 'succeeded'")).toEqual([
      { n: TASKS },
    ])
    // Each distinct call reached the vendor once: the journaled ones were replayed, not resent.
    expect(vendor.answered.size).toBe(TASKS * CALLS_PER_TASK)
    expect([...vendor.answered.entries()].filter(([, n]) => n !== 1)).toEqual([])
    expect(vendor.requests.length).toBe(TASKS * CALLS_PER_TASK)
    expect(ledgerSum()).toBe(bill())
    const [batch] = query<{ spent: number }>(db, 'SELECT budget_spent_micros AS spent FROM batches')
    expect(batch!.spent).toBe(bill())
    expect(query(db, 'SELECT * FROM budget_reservations')).toEqual([])
    expect(query(db, 'SELECT * FROM call_journal')).toEqual([])
  }, 120_000)
})
