// Prompt caching in the console: the Settings toggle reaches the engine of `pacer serve` (started
// with --no-prompt-cache) and the database, and the Spend view shows what the cache saved. Real
// Chromium on the built console, a real `pacer serve` on a temporary database.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/main/engine/app/engine'
import { consoleSession } from '../helpers/browser'
import { ROOT, query, until } from '../helpers/cli'

const s = consoleSession({
  name: 'cache',
  async prepare(db) {
    // Two steps of a multi-step Anthropic task, as the runner ledgers them (prompt-caching.test.ts
    // shows a server answering these counts).
    const engine = createEngine({ dbPath: db })
    const row = (step: number, cached: number, written: number) =>
      engine.ledger.record({
        taskId: 1,
        batchId: null,
        fp: 'f1',
        worker: 'w',
        taskType: 'agent',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        step,
        usage: {
          inputTokens: cached + written,
          cachedInputTokens: cached,
          cacheWriteTokens: written,
          outputTokens: 3,
        },
        outcome: 'executed',
        latencyMs: 10,
        status: 200,
        epoch: 1,
      })
    row(1, 0, 2100)
    row(2, 2100, 8)
    await engine.shutdown({ graceMs: 0 })
    return { args: ['--no-prompt-cache'] }
  },
})

describe('console: prompt caching', () => {
  it('shows the process off, and the toggle turns it on in the engine and the database', async () => {
    await s.page.getByTestId('nav-settings').click()
    const toggle = s.page.getByTestId('prompt-caching-toggle')
    await toggle.waitFor()
    expect(await toggle.isChecked()).toBe(false)
    // A controlled checkbox: it shows the engine's answer, not the click (check() would race it).
    await toggle.click()
    await until(
      async () => (await s.served.api<{ promptCaching: boolean }>('settings:get')).promptCaching,
    )
    await until(() => toggle.isChecked())
    expect(
      query<{ value: string }>(s.db, `SELECT value FROM settings WHERE key = 'promptCaching'`),
    ).toEqual([{ value: 'true' }])
    await s.page.screenshot({
      path: join(ROOT, 'test-results', 'screenshots', 'prompt-caching.png'),
    })
  })

  it('the Spend view shows the cache reads, writes and what they saved', async () => {
    await s.page.getByTestId('nav-spend').click()
    const row = s.page.getByTestId('spend-row').filter({ hasText: 'agent' })
    await row.waitFor()
    // Read 2,100 × ($3 − $0.30) = 5,670 µ$ saved; written 2,108 × ($3.75 − $3) = 1,581 µ$ extra.
    expect(await row.getAttribute('data-cached-input-tokens')).toBe('2100')
    expect(await row.getAttribute('data-cache-write-tokens')).toBe('2108')
    expect(await row.getAttribute('data-cache-saved-micros')).toBe('5670')
    expect(await row.getAttribute('data-cache-write-extra-micros')).toBe('1581')
    const text = (await row.textContent()) ?? ''
    expect(text).toContain('2,100 / 2,108')
    // Net 4,089 µ$, shown to 4 decimals.
    expect(text).toContain('$0.0041')
    expect(s.errors).toEqual([])
  })
})
