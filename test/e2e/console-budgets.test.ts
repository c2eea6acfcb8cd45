// The Budgets section of the Spend view, in real Chromium over `pacer serve`: a daily cap kept in
// the database stops a console batch against a loopback OpenAI-speaking vendor that bills known
// usage; spend and reservations move during the run, a banner says the cap is reached, the
// vendor's bill stays under it, and raising the cap in the section resumes exactly the held tasks.
import { describe, expect, it } from 'vitest'
import { formatUsd } from '../../src/shared/format'
import { createEngine } from '../../src/main/engine/app/engine'
import { consoleSession } from '../helpers/browser'
import { query, until } from '../helpers/cli'
import { fakeVendor, variedUsage, type FakeVendor } from '../helpers/fake-vendor'

// USD per 1M tokens = micro-dollars per token: the vendor's bill is integer arithmetic.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const CAP_MICROS = 20_000
const TASKS = 300

let vendor: FakeVendor

const s = consoleSession({
  name: 'budgets',
  async prepare(db) {
    vendor = await fakeVendor({ dialect: 'openai', latencyMs: 120, usage: variedUsage })
    const engine = createEngine({ dbPath: db })
    await engine.handlers['settings:set']({
      baseUrls: { 'openai-compatible': vendor.baseUrl },
      priceOverrides: { local: PRICE },
    })
    await engine.handlers['budgets:set']({ usd: CAP_MICROS / 1e6, period: 'day' })
    await engine.shutdown()
  },
  teardown: () => vendor?.close(),
})

const bill = () =>
  vendor.answers.reduce(
    (sum, a) => sum + a.usage.input * PRICE.input + a.usage.output * PRICE.output,
    0,
  )

/** The micro-dollars a cell of the section shows ('$0.0123' → 12300). */
async function cellMicros(testId: string): Promise<number> {
  const text = (await s.page.getByTestId(testId).textContent()) ?? ''
  return Math.round(Number(/\$([\d.,]+)/.exec(text)?.[1]?.replace(/,/g, '') ?? 'NaN') * 1e6)
}

describe('the console’s Budgets section', () => {
  it('shows spend and reservations moving, the banner at the cap, and a raised cap resumes the held tasks', async () => {
    await s.page.getByTestId('nav-spend').click()
    await s.page.getByTestId('budget-row-1').waitFor({ timeout: 20_000 })
    const tasks = Array.from({ length: TASKS }, (_, i) => ({
      type: 'classify',
      payload: { prompt: `budget-e2e-${i}` },
      provider: 'openai-compatible',
      model: 'local',
    }))
    const { batchId } = await s.served.api<{ batchId: string }>('tasks:enqueue', {
      tasks,
      params: { max_tokens: 20 },
    })

    // During the run: calls in flight hold reservations, and the spend climbs.
    let sawReserved = false
    const spentSeen = new Set<number>()
    await until(async () => {
      if ((await cellMicros('budget-reserved-1')) > 0) sawReserved = true
      spentSeen.add(await cellMicros('budget-spent-1'))
      return sawReserved && spentSeen.size >= 3
    }, 60_000)

    const banner = s.page.getByTestId('budget-reached')
    await banner.waitFor({ timeout: 60_000 })
    await expect(banner.textContent()).resolves.toMatch(
      /held by budget: the daily cap \(UTC\) on all spend/,
    )
    expect(bill()).toBeLessThanOrEqual(CAP_MICROS)
    // The thresholds said on the way (50, 80, then 100 % when the cap held work).
    const warning = s.page.getByTestId('budget-warning-1')
    await until(
      async () =>
        /Warning: 100% of the \$0\.0200 cap on all spend reached/.test(
          (await warning.textContent()) ?? '',
        ),
      20_000,
    )
    const [held] = query<{ state: string }>(s.db, 'SELECT state FROM batches WHERE id = ?', batchId)
    expect(held!.state).toBe('paused')
    const sentBefore = vendor.requests.length
    expect(sentBefore).toBeLessThan(TASKS)

    // Raise the cap in the section: the held batch resumes and finishes, each task sent once.
    await s.page.getByTestId('budget-cap-input-1').fill('5')
    await s.page.getByTestId('budget-save-1').click()
    await until(() => {
      const [b] = query<{ state: string }>(s.db, 'SELECT state FROM batches WHERE id = ?', batchId)
      return b?.state === 'done'
    }, 90_000)
    expect(vendor.requests.length).toBe(TASKS)
    expect([...vendor.answered.values()].every((n) => n === 1)).toBe(true)
    await banner.waitFor({ state: 'detached', timeout: 20_000 })
    // A new amount starts the thresholds again.
    await warning.waitFor({ state: 'detached', timeout: 20_000 })
    await until(async () => (await cellMicros('budget-reserved-1')) === 0, 20_000)
    const [ledger] = query<{ cost: number }>(s.db, 'SELECT SUM(cost_micros) AS cost FROM ledger')
    // The cell shows the ledger's sum in the one money format (4 decimals).
    const spent = async () => (await s.page.getByTestId('budget-spent-1').textContent()) ?? ''
    await until(async () => (await spent()).includes(formatUsd(ledger!.cost)), 20_000)
    expect(s.errors).toEqual([])
  }, 240_000)
})
