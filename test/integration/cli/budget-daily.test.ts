// A daily cap kept in the database (`pacer budgets set --daily`) holds across processes: three
// `pacer run` on one database against a loopback OpenAI-speaking vendor that bills known usage,
// 64 calls in flight each, one SIGKILLed mid-run. The vendor's own bill stays under the cap, the
// dead process's reservations come back (its sent calls stay counted as in doubt: they may have
// been billed), and the cap's spend is the ledger's sum to the micro-dollar.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { prefixedBatch, query, runOnVendor, runPacer, tempDir, until } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor, variedUsage } from '../../helpers/fake-vendor'

afterEach(closeVendors)

// USD per 1M tokens = micro-dollars per token: the vendor's bill is integer arithmetic.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const CAP_MICROS = 60_000
const FLAGS = ['--max-tokens', '20', '--initial-concurrency', '64', '--min-concurrency', '64']

interface CapJson {
  id: number
  period: string
  capMicros: number
  spentMicros: number
  inDoubtMicros: number
  reservedMicros: number
  leftMicros: number
}

describe('pacer budgets set --daily: one cap, three processes', () => {
  it('keeps the vendor bill under the cap with one process SIGKILLed, and its reservations come back', async () => {
    const vendor = await fakeVendor({ dialect: 'openai', latencyMs: 150, usage: variedUsage })
    const dir = tempDir('pacer-budget-daily-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor, { prices: { local: PRICE } })
    const set = await runPacer(['budgets', 'set', String(CAP_MICROS / 1e6), '--daily', '--db', db])
    expect(set.code, set.stderr).toBe(0)
    expect(set.stderr).toMatch(/cap 1 set: \$0\.0600 on all spend, per day \(UTC\)/)
    const bill = () =>
      vendor.answers.reduce(
        (sum, a) => sum + a.usage.input * PRICE.input + a.usage.output * PRICE.output,
        0,
      )

    const runs = ['p0', 'p1', 'p2'].map((p) => runOnVendor(prefixedBatch(dir, p, 400), db, FLAGS))
    // Killed once the cap is a third spent, with calls in flight.
    await until(() => bill() >= CAP_MICROS / 3, 90_000)
    runs[0]!.child.kill('SIGKILL')
    const [killed, ...survivors] = await Promise.all(runs.map((r) => r.done))
    expect(killed!.signal).toBe('SIGKILL')
    for (const s of survivors) {
      // Stopped by the cap, each with the cap's own line.
      expect(s.code, s.stderr).toBe(5)
      expect(s.stderr).toMatch(
        /pacer: stopped by budget: the daily cap \(UTC\) on all spend is \$0\.0600 for \d{4}-\d\d-\d\d/,
      )
    }

    expect(bill()).toBeLessThanOrEqual(CAP_MICROS)
    // The cap bit with real money: most of it was spent.
    expect(bill()).toBeGreaterThan(CAP_MICROS / 2)
    // The dead process's reservations came back (the survivors swept them with its tasks).
    expect(query(db, 'SELECT * FROM budget_reservations')).toEqual([])
    const list = await runPacer(['budgets', '--db', db, '--json'])
    expect(list.code, list.stderr).toBe(0)
    const [cap] = JSON.parse(list.stdout) as CapJson[]
    expect(cap).toMatchObject({ id: 1, period: 'day', capMicros: CAP_MICROS, reservedMicros: 0 })
    // Spend is the ledger's own sum; what the dead process sent and never ledgered is in doubt.
    const [ledger] = query<{ cost: number }>(db, 'SELECT SUM(cost_micros) AS cost FROM ledger')
    expect(cap!.spentMicros).toBe(ledger!.cost)
    expect(cap!.spentMicros + cap!.inDoubtMicros).toBeLessThanOrEqual(CAP_MICROS)
    expect(cap!.spentMicros + cap!.inDoubtMicros).toBeGreaterThanOrEqual(bill())
    expect(cap!.inDoubtMicros).toBeGreaterThan(0)
  }, 180_000)
})
