// `pacer run --budget` against a loopback OpenAI-speaking vendor that bills known usage, many calls
// in flight: the vendor's own bill stays under the cap, what was not started is held, the run
// exits 5; a rerun with a higher cap finishes the rest, each task sent once. An unpriced model
// under a cap is refused before anything is sent.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { query, runOnVendor, tempDir, until, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor, variedUsage } from '../../helpers/fake-vendor'

afterEach(closeVendors)

// USD per 1M tokens = micro-dollars per token: the vendor's bill is integer arithmetic.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const TASKS = 600
const CAP_USD = 0.05

function batchFile(dir: string): string {
  const tasks = Array.from({ length: TASKS }, (_, i) => ({
    type: 'classify',
    payload: { prompt: `budget-task-${i}` },
  }))
  return writeJsonl(dir, 'batch.jsonl', tasks)
}

const FLAGS = ['--max-tokens', '20', '--initial-concurrency', '64', '--min-concurrency', '64']

describe('pacer run --budget', () => {
  it('never lets the vendor bill past the cap, holds the rest (exit 5), and a higher cap finishes it once', async () => {
    const vendor = await fakeVendor({ dialect: 'openai', latencyMs: 30, usage: variedUsage })
    const dir = tempDir('pacer-budget-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor, { prices: { local: PRICE } })
    const file = batchFile(dir)
    const bill = () =>
      vendor.answers.reduce(
        (sum, a) => sum + a.usage.input * PRICE.input + a.usage.output * PRICE.output,
        0,
      )

    const first = await runOnVendor(file, db, ['--budget', String(CAP_USD), ...FLAGS]).done
    expect(first.code, first.stderr).toBe(5)
    const report = JSON.parse(first.stdout) as { budget: unknown; queued: number }
    expect(report.budget).toMatchObject({
      capUsd: CAP_USD,
      stoppedBy: expect.stringMatching(/^held by budget: /) as string,
    })
    expect(first.stderr).toMatch(
      /stopped by the run's budget: \$[\d.]+ spent of \$0\.0500; \d+ task/,
    )
    const capMicros = CAP_USD * 1e6
    const billed = bill()
    expect(billed).toBeLessThanOrEqual(capMicros)
    // The cap bit with real money, not at the first call: most of it was spent.
    expect(billed).toBeGreaterThan(capMicros / 2)
    // Many calls were in flight at once.
    expect(vendor.maxOpen).toBeGreaterThanOrEqual(32)

    const [batch] = query<{ state: string; stop_reason: string; spent: number; cap: number }>(
      db,
      'SELECT state, stop_reason, budget_spent_micros AS spent, budget_micros AS cap FROM batches',
    )
    expect(batch).toMatchObject({ state: 'interrupted', cap: capMicros })
    expect(batch!.stop_reason).toMatch(/^held by budget: /)
    // Settled to the ledger, nothing left reserved; the ledger's sum is the vendor's bill.
    const [ledger] = query<{ cost: number }>(db, 'SELECT SUM(cost_micros) AS cost FROM ledger')
    expect(ledger!.cost).toBe(billed)
    expect(batch!.spent).toBe(billed)
    expect(query(db, 'SELECT * FROM budget_reservations')).toEqual([])
    const counts = query<{ status: string; n: number }>(
      db,
      'SELECT status, COUNT(*) AS n FROM tasks GROUP BY status ORDER BY status',
    )
    const byStatus = Object.fromEntries(counts.map((c) => [c.status, c.n]))
    expect(byStatus['failed']).toBeUndefined()
    expect(byStatus['queued']).toBeGreaterThan(0)
    expect(byStatus['succeeded']).toBe(vendor.answers.length)

    const second = await runOnVendor(file, db, ['--budget', '1', ...FLAGS]).done
    expect(second.code, second.stderr).toBe(0)
    expect(vendor.answered.size).toBe(TASKS)
    expect([...vendor.answered.values()].every((n) => n === 1)).toBe(true)
    expect(vendor.requests.length).toBe(TASKS)
    const [after] = query<{ spent: number }>(db, 'SELECT budget_spent_micros AS spent FROM batches')
    expect(after!.spent).toBe(bill())
    expect(query(db, 'SELECT * FROM budget_reservations')).toEqual([])
  }, 120_000)

  it('a run SIGKILLed mid-run: its reservations come back, and the rerun under the stored cap keeps the vendor bill under it', async () => {
    const vendor = await fakeVendor({ dialect: 'openai', latencyMs: 150, usage: variedUsage })
    const dir = tempDir('pacer-budget-kill-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor, { prices: { local: PRICE } })
    const file = batchFile(dir)
    const capMicros = 30_000
    const bill = () =>
      vendor.answers.reduce(
        (sum, a) => sum + a.usage.input * PRICE.input + a.usage.output * PRICE.output,
        0,
      )
    const first = runOnVendor(file, db, ['--budget', String(capMicros / 1e6), ...FLAGS])
    await until(() => vendor.answers.length >= 40, 60_000)
    first.child.kill('SIGKILL')
    await first.done
    // It died holding reservations for the calls it had in flight.
    const held = query<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM budget_reservations')[0]!.n
    expect(held).toBeGreaterThan(0)

    // No --budget: the batch keeps its cap.
    const second = await runOnVendor(file, db, FLAGS).done
    expect([0, 5], second.stderr).toContain(second.code)
    // The same batch, resumed (--json keeps the resume line off stderr).
    expect(query(db, 'SELECT COUNT(*) AS n FROM batches')).toEqual([{ n: 1 }])
    expect(bill()).toBeLessThanOrEqual(capMicros)
    expect(query(db, 'SELECT * FROM budget_reservations')).toEqual([])
    const [b] = query<{ spent: number; cap: number }>(
      db,
      'SELECT budget_spent_micros AS spent, budget_micros AS cap FROM batches',
    )
    const [ledger] = query<{ cost: number }>(db, 'SELECT SUM(cost_micros) AS cost FROM ledger')
    expect(b).toEqual({ spent: ledger!.cost, cap: capMicros })
  }, 120_000)

  it('refuses an unpriced model under a cap in one line, sending nothing', async () => {
    const vendor = await fakeVendor({ dialect: 'openai' })
    const dir = tempDir('pacer-budget-unpriced-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor)
    const file = writeJsonl(dir, 'batch.jsonl', [{ type: 'classify', payload: { prompt: 'x' } }])
    const run = await runOnVendor(file, db, ['--budget', '5']).done
    expect(run.code, run.stderr).toBe(2)
    const lines = run.stderr.split('\n').filter((l) => l.includes('has no price'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/openai-compatible\/local has no price.*Price overrides/)
    expect(vendor.requests.length).toBe(0)
  }, 60_000)
})
