// A team's daily cap (`pacer budgets set --daily --store`) holds across machines: three `pacer
// run` processes, each with its own database and HOME (three machines), one real redis-server,
// against one loopback OpenAI-speaking vendor that bills known usage, 64 calls in flight each;
// one machine is SIGKILLed mid-run. The vendor's own bill stays under the cap, the survivors exit
// 5 naming the team's cap, and the dead machine's reservations come back with its lease (its
// sent calls stay counted as in doubt: they may have been billed).
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { prefixedBatch, query, runOnVendor, runPacer, tempDir, until } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor, variedUsage } from '../../helpers/fake-vendor'
import { startRedis, type RedisServer } from '../../helpers/redis'
import type { SpendCapView } from '../../../src/shared/contract/spend'

const redisServers: RedisServer[] = []

afterEach(async () => {
  await closeVendors()
  await Promise.all(redisServers.splice(0).map((r) => r.close()))
})

// USD per 1M tokens = micro-dollars per token: the vendor's bill is integer arithmetic.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const CAP_MICROS = 60_000
const LEASE_S = 3
const FLAGS = [
  '--max-tokens',
  '20',
  '--initial-concurrency',
  '64',
  '--min-concurrency',
  '64',
  '--lease',
  String(LEASE_S),
]

describe('pacer budgets set --daily --store: one team cap, three machines', () => {
  it('keeps the vendor bill under the cap with one machine SIGKILLed, and its reservations come back', async () => {
    const redis = await startRedis()
    redisServers.push(redis)
    const vendor = await fakeVendor({ dialect: 'openai', latencyMs: 150, usage: variedUsage })
    const dir = tempDir('pacer-team-budget-')
    const machines = ['m0', 'm1', 'm2'].map((m) => {
      const home = join(dir, m)
      mkdirSync(home)
      return { name: m, home, db: join(home, 'pacer.db') }
    })
    for (const m of machines) await useVendor(m.db, vendor, { prices: { local: PRICE } })
    // The team's cap: set once, in the store, from any machine (no database needed).
    const set = await runPacer(
      ['budgets', 'set', String(CAP_MICROS / 1e6), '--daily', '--store', redis.url],
      { HOME: machines[1]!.home },
    )
    expect(set.code, set.stderr).toBe(0)
    expect(set.stderr).toMatch(/team cap 1 set: \$0\.0600 on all spend, per day \(UTC\)/)
    // A machine's own database has no cap: the team's is the one that holds.
    const local = await runPacer(['budgets', '--db', machines[1]!.db, '--json'], {
      HOME: machines[1]!.home,
    })
    expect(JSON.parse(local.stdout)).toEqual([])
    const bill = () =>
      vendor.answers.reduce(
        (sum, a) => sum + a.usage.input * PRICE.input + a.usage.output * PRICE.output,
        0,
      )

    const runs = machines.map((m) =>
      runOnVendor(prefixedBatch(m.home, m.name, 400), m.db, ['--store', redis.url, ...FLAGS], {
        HOME: m.home,
      }),
    )
    // Killed once the cap is a third spent, with calls in flight.
    await until(() => bill() >= CAP_MICROS / 3, 90_000)
    runs[0]!.child.kill('SIGKILL')
    const [killed, ...survivors] = await Promise.all(runs.map((r) => r.done))
    expect(killed!.signal).toBe('SIGKILL')
    for (const s of survivors) {
      // Stopped by the team's cap, each with its line.
      expect(s.code, s.stderr).toBe(5)
      expect(s.stderr).toMatch(
        /pacer: stopped by budget: the team's daily cap \(UTC\) on all spend is \$0\.0600 for \d{4}-\d\d-\d\d/,
      )
    }
    // Every machine sent calls: the cap was shared, not one machine's.
    for (const m of machines) {
      expect(vendor.answers.some((a) => a.prompt.startsWith(`${m.name}-`))).toBe(true)
    }

    expect(bill()).toBeLessThanOrEqual(CAP_MICROS)
    // The cap bit with real money: most of it was spent.
    expect(bill()).toBeGreaterThan(CAP_MICROS / 2)
    // Once the dead machine's lease is over its reservations come back (a read sweeps too).
    const cap = await until(async () => {
      const list = await runPacer(['budgets', '--store', redis.url, '--json'], {
        HOME: machines[2]!.home,
      })
      expect(list.code, list.stderr).toBe(0)
      const [c] = JSON.parse(list.stdout) as SpendCapView[]
      return c!.reservedMicros === 0 && c
    }, 30_000)
    expect(cap).toMatchObject({ id: 1, period: 'day', capMicros: CAP_MICROS, reservedMicros: 0 })
    // Spend is what the machines' ledgers hold: every row a survivor wrote is settled; the dead
    // machine's rows are spent, or (killed between a row's commit and its settle) still in doubt
    // at their worst case. What it sent and never ledgered is in doubt.
    const ledgers = machines
      .map((m) =>
        query<{ cost: number | null }>(m.db, 'SELECT SUM(cost_micros) AS cost FROM ledger'),
      )
      .reduce((sum, [row]) => sum + (row?.cost ?? 0), 0)
    expect(cap!.spentMicros).toBeLessThanOrEqual(ledgers)
    expect(cap!.spentMicros + cap!.inDoubtMicros).toBeGreaterThanOrEqual(ledgers)
    const survivorsLedgers = machines
      .slice(1)
      .map((m) =>
        query<{ cost: number | null }>(m.db, 'SELECT SUM(cost_micros) AS cost FROM ledger'),
      )
      .reduce((sum, [row]) => sum + (row?.cost ?? 0), 0)
    expect(cap!.spentMicros).toBeGreaterThanOrEqual(survivorsLedgers)
    expect(cap!.spentMicros + cap!.inDoubtMicros).toBeLessThanOrEqual(CAP_MICROS)
    expect(cap!.spentMicros + cap!.inDoubtMicros).toBeGreaterThanOrEqual(bill())
    expect(cap!.inDoubtMicros).toBeGreaterThan(0)
  }, 180_000)
})
