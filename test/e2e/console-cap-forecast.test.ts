// The import preview names the spend caps a batch would hit, in real Chromium over `pacer serve`:
// a daily cap kept in the database that the batch would pass, and a cap it fits under, each in
// the line `pacer forecast` prints (the engine's preview, rendered as is).
import { describe, expect, it } from 'vitest'
import { capForecastLine } from '../../src/shared/cap-forecast-text'
import type { ForecastView } from '../../src/shared/contract'
import { createEngine } from '../../src/main/engine/app/engine'
import { consoleSession } from '../helpers/browser'

// USD per 1M tokens = micro-dollars per token.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const TASKS = 200

const s = consoleSession({
  name: 'cap-forecast',
  async prepare(db) {
    const engine = createEngine({ dbPath: db })
    await engine.handlers['settings:set']({
      baseUrls: { 'openai-compatible': 'http://127.0.0.1:9/v1' },
      priceOverrides: { local: PRICE },
    })
    await engine.handlers['budgets:set']({ usd: 0.01, period: 'day' })
    await engine.handlers['budgets:set']({
      usd: 100,
      model: 'local',
      provider: 'openai-compatible',
      period: 'total',
    })
    await engine.shutdown()
  },
})

const content = Array.from({ length: TASKS }, (_, i) =>
  JSON.stringify({
    type: 'classify',
    provider: 'openai-compatible',
    model: 'local',
    payload: { prompt: `cap-forecast-${String(i).padStart(4, '0')}` },
  }),
).join('\n')

describe('the import preview and the spend caps', () => {
  it('says which cap the batch would hit and at about which task, as pacer forecast does', async () => {
    await s.page.getByTestId('import-file').setInputFiles({
      name: 'capped.jsonl',
      mimeType: 'application/jsonl',
      buffer: Buffer.from(content),
    })
    const hit = s.page.getByTestId('import-forecast-cap-1')
    await hit.waitFor({ timeout: 20_000 })
    const { forecast } = await s.served.api<{ forecast: ForecastView }>('batches:preview', {
      fileName: 'capped.jsonl',
      content,
    })
    const [daily, model] = forecast.caps
    expect(daily!.hitAt).not.toBeNull()
    expect(model!.hitAt).toBeNull()
    await expect(hit.textContent()).resolves.toBe(capForecastLine(daily!, TASKS))
    await expect(hit.textContent()).resolves.toMatch(
      /^cap: would hit the daily cap \(UTC\) on all spend for \d{4}-\d\d-\d\d \(\$0\.0100, \$0\.0000 spent, \$0\.0100 left\): forecast \$[\d.]+, held from about task \d+ of 200 \(line \d+\) on$/,
    )
    await expect(hit.getAttribute('class')).resolves.toContain('hint-bad')
    const fits = s.page.getByTestId('import-forecast-cap-2')
    await expect(fits.textContent()).resolves.toBe(capForecastLine(model!, TASKS))
    await expect(fits.textContent()).resolves.toMatch(
      /^cap: fits under the cap on openai-compatible\/local/,
    )
    await s.page.getByRole('button', { name: 'Discard' }).click()
  })
})
