// The import dialog's per-run budget, in real Chromium over `pacer serve`: the same cap as
// `pacer run --budget USD`. A value that is not a positive dollar amount is named under the field
// and blocks Queue; a valid one is weighed in the preview's cap lines (the engine's line for the
// run's cap, as `pacer forecast --budget` prints it) and stored with the batch it queues, whose
// calls it then holds. The command refuses a bad amount itself, naming the field.
import { describe, expect, it } from 'vitest'
import { capForecastLine } from '../../src/shared/cap-forecast-text'
import type { ForecastView } from '../../src/shared/contract'
import { createEngine } from '../../src/main/engine/app/engine'
import { consoleSession } from '../helpers/browser'
import { query, until } from '../helpers/cli'

// USD per 1M tokens = micro-dollars per token.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const TASKS = 20
// One micro-dollar: no call's worst case fits, so nothing is sent to the (closed) port.
const BUDGET_USD = 0.000001

const s = consoleSession({
  name: 'import-budget',
  async prepare(db) {
    const engine = createEngine({ dbPath: db })
    await engine.handlers['settings:set']({
      baseUrls: { 'openai-compatible': 'http://127.0.0.1:9/v1' },
      priceOverrides: { local: PRICE },
    })
    await engine.shutdown()
  },
})

const content = Array.from({ length: TASKS }, (_, i) =>
  JSON.stringify({
    type: 'classify',
    provider: 'openai-compatible',
    model: 'local',
    payload: { prompt: `import-budget-${i}` },
  }),
).join('\n')

describe("the import dialog's budget for the run", () => {
  it('refuses what is not a positive dollar amount, weighs the cap in the preview and stores it with the batch', async () => {
    const { page } = s
    await page.getByTestId('import-file').setInputFiles({
      name: 'budgeted.jsonl',
      mimeType: 'application/jsonl',
      buffer: Buffer.from(content),
    })
    await page.getByTestId('import-forecast').waitFor({ timeout: 20_000 })
    const field = page.getByTestId('import-budget')
    const confirm = page.getByTestId('import-confirm')
    await expect(confirm.isDisabled()).resolves.toBe(false)
    // No cap given: no line for the run's cap.
    await expect(page.getByTestId('import-forecast-cap-run').count()).resolves.toBe(0)

    for (const bad of ['0', '-2', 'ten', '1e3']) {
      await field.fill(bad)
      await field.press('Enter')
      const error = page.getByTestId('import-budget-error')
      await error.waitFor()
      await expect(error.textContent()).resolves.toBe(
        `Budget (USD): give a positive dollar amount such as 5 or 0.25, got "${bad}"`,
      )
      await expect(confirm.isDisabled()).resolves.toBe(true)
    }

    await field.fill(`$${BUDGET_USD}`)
    await field.press('Enter')
    const runCap = page.getByTestId('import-forecast-cap-run')
    await runCap.waitFor({ timeout: 20_000 })
    await expect(page.getByTestId('import-budget-error').count()).resolves.toBe(0)
    const { forecast } = await s.served.api<{ forecast: ForecastView }>('batches:preview', {
      fileName: 'budgeted.jsonl',
      content,
      budgetUsd: BUDGET_USD,
    })
    const line = forecast.caps.find((c) => c.capId === null)!
    expect(line.hitAt).not.toBeNull()
    await expect(runCap.textContent()).resolves.toBe(capForecastLine(line, TASKS))
    await expect(runCap.textContent()).resolves.toMatch(/^cap: would hit the run's cap/)

    await confirm.click()
    await until(
      () => query(s.db, "SELECT id FROM batches WHERE name = 'budgeted.jsonl'")[0],
      20_000,
    )
    const [batch] = query<{ cap: number }>(
      s.db,
      "SELECT budget_micros AS cap FROM batches WHERE name = 'budgeted.jsonl'",
    )
    expect(batch!.cap).toBe(1)
    // The cap holds the batch's calls: it stops, held by budget, with nothing spent.
    const held = await until(
      () =>
        query<{ reason: string | null; spent: number }>(
          s.db,
          "SELECT stop_reason AS reason, budget_spent_micros AS spent FROM batches WHERE name = 'budgeted.jsonl'",
        ).find((b) => b.reason?.startsWith('held by budget')),
      30_000,
    )
    expect(held.spent).toBe(0)
    expect(query(s.db, 'SELECT * FROM ledger')).toEqual([])
  })

  it('the import command refuses an amount that is not positive, naming the field', async () => {
    await expect(
      s.served.api('batches:import', { fileName: 'x.jsonl', content, budgetUsd: 0 }),
    ).rejects.toThrow(/budgetUsd.*positive dollar amount/)
  })
})
