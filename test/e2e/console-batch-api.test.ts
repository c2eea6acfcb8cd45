// The console's Batch API (issue 22) in real Chromium over `pacer serve`: the import dialog prices
// the file live and through the batch API side by side; choosing the Batch API runs it through the
// vendor double (OpenAI's Batch API on loopback, its clock moved by this test), the Queue view
// shows the remote batch's state and counts as the double advances it, then its answers; and a
// remote batch's Cancel stops it at the vendor, keeping what had finished.
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createEngine } from '../../src/main/engine/app/engine'
import type { BatchSummary } from '../../src/shared/contract'
import { startBatchVendor, type BatchVendor } from '../helpers/batch-vendor/server'
import { consoleSession } from '../helpers/browser'
import type { FakeClock } from '../helpers/clock'
import { query, until } from '../helpers/cli'
import { formatUsd } from '../../src/shared/format'

let vendor: BatchVendor

const s = consoleSession({
  name: 'batch-api',
  async prepare(db) {
    vendor = await startBatchVendor({ errorShare: 0, validateMs: 1_000, processMs: 60_000 })
    const engine = createEngine({ dbPath: db })
    await engine.handlers['settings:set']({
      defaultProvider: 'openai-compatible',
      defaultModel: 'gpt-4o-mini',
    })
    await engine.shutdown()
    return {
      env: {
        PACER_OPENAI_COMPATIBLE_API_KEY: 'sk-test-batch',
        PACER_OPENAI_COMPATIBLE_BASE_URL: vendor.openaiBase,
        PACER_BATCH_POLL_MS: '50',
        PACER_BATCH_SETTLE_MS: '200',
      },
    }
  },
  teardown: () => vendor?.close(),
})

const advance = (ms: number) => (vendor.clock as FakeClock).advance(ms)

function jsonl(name: string, n: number, distinct: number): Buffer {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({ type: 'label', payload: { text: `${name} item ${i % distinct}` } }),
  )
  return Buffer.from(`${lines.join('\n')}\n`)
}

/** Opens the file in the import dialog and queues it through the Batch API. */
async function importViaBatchApi(page: Page, name: string, content: Buffer): Promise<string> {
  await page.getByTestId('nav-queue').click()
  await page
    .getByTestId('import-file')
    .setInputFiles({ name, mimeType: 'application/x-ndjson', buffer: content })
  await page.getByTestId('import-route').waitFor()
  await page.getByTestId('import-route-batch').click()
  await expect(page.getByTestId('import-confirm').textContent()).resolves.toMatch(/via Batch API/)
  await page.getByTestId('import-confirm').click()
  const batch = await until(async () => {
    const list = await s.served.api<BatchSummary[]>('batches:list')
    return list.find((b) => b.name === name)
  }, 30_000)
  expect(batch.batchApi).toBe(true)
  return batch.id
}

const rowOf = (page: Page, batchId: string) =>
  page.locator(`[data-testid="batch-row"][data-batch-id="${batchId}"]`)

/** The batch's first remote batch in the view once it shows `status`. */
async function remoteWith(page: Page, batchId: string, status: string) {
  const remote = rowOf(page, batchId).getByTestId('provider-batch').first()
  await until(async () => (await remote.getAttribute('data-status')) === status, 60_000)
  return remote
}

describe('the console runs a batch through the Batch API and follows it', () => {
  it('prices both ways side by side; shows the remote batch’s state as it moves, then the answers', async () => {
    const { page } = s
    await page.getByTestId('nav-queue').click()
    await page.getByTestId('import-file').setInputFiles({
      name: 'priced.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: jsonl('p', 4, 4),
    })
    const route = page.getByTestId('import-route')
    await route.waitFor()
    const live = (await page.getByTestId('import-route-live-price').textContent()) ?? ''
    const batch = (await page.getByTestId('import-route-batch-price').textContent()) ?? ''
    const usd = (t: string) => Number(t.replace(/[^0-9.]/g, ''))
    expect(usd(live)).toBeGreaterThan(0)
    // Half price, each price rounded to the format's 4 decimals.
    expect(Math.abs(usd(batch) * 2 - usd(live))).toBeLessThanOrEqual(0.0002)
    await expect(route.textContent()).resolves.toMatch(/half price, results within 24 h/)

    const id = await importViaBatchApi(page, 'labels.jsonl', jsonl('labels', 8, 4))
    const row = rowOf(page, id)
    await row.getByTestId('batch-via-batch-api').waitFor()
    // Accepted by the double, which has not moved its clock yet: validating.
    const remote = await remoteWith(page, id, 'validating')
    const remoteId = (await remote.getAttribute('data-remote-id')) ?? ''
    expect(remoteId).toMatch(/^batch_/)
    await expect(remote.getByTestId('provider-batch-id').textContent()).resolves.toBe(remoteId)
    await expect(remote.textContent()).resolves.toMatch(/openai/)
    await expect(remote.getByTestId('provider-batch-waited').textContent()).resolves.toMatch(
      /^waiting \d+s$/,
    )
    // The double's clock moves: running, half of its 4 lines done.
    advance(1_000 + 30_000)
    const running = await remoteWith(page, id, 'in_progress')
    await until(
      async () =>
        /2 completed/.test(
          (await running.getByTestId('provider-batch-counts').textContent()) ?? '',
        ),
      60_000,
    )
    await expect(running.getByTestId('provider-batch-counts').textContent()).resolves.toMatch(
      /of 4 requests/,
    )
    // Every line done and the batch finalized: the results come back and the batch is done.
    advance(60_000)
    const ended = await remoteWith(page, id, 'completed')
    await expect(ended.getByTestId('provider-batch-waited').textContent()).resolves.toMatch(
      /^took /,
    )
    await expect(ended.getByTestId('provider-batch-cancel').count()).resolves.toBe(0)
    await until(async () => (await row.getAttribute('data-state')) === 'done', 60_000)
    await expect(row.getByTestId('batch-progress').textContent()).resolves.toMatch(/8 \/ 8/)

    // Its answers show in the task drawer as a live run's do: the double's own text.
    await row.locator('.batch-name').click()
    const taskRow = page.locator('[data-testid="task-row"]').first()
    await taskRow.click()
    const answer = page.getByTestId('task-detail').getByTestId('task-detail-answer')
    await answer.waitFor()
    const answers = new Set(vendor.answers().values())
    expect(answers.has((await answer.textContent()) ?? '')).toBe(true)
    await page.getByTestId('task-detail-close').click()
    expect(s.errors).toEqual([])
  })

  it('Cancel on a remote batch stops it at the vendor; what had finished is kept', async () => {
    const { page } = s
    const id = await importViaBatchApi(page, 'to-cancel.jsonl', jsonl('cancel', 4, 4))
    await remoteWith(page, id, 'validating')
    // Half of its lines done, then the operator cancels it.
    advance(1_000 + 30_000)
    const running = await remoteWith(page, id, 'in_progress')
    await running.getByTestId('provider-batch-cancel').click()
    const cancelling = await remoteWith(page, id, 'cancelling')
    await expect(cancelling.getByTestId('provider-batch-cancel').count()).resolves.toBe(0)
    advance(5_000)
    await remoteWith(page, id, 'cancelled')
    const row = rowOf(page, id)
    await until(async () => (await row.getAttribute('data-state')) === 'done', 60_000)
    const done = (await s.served.api<BatchSummary[]>('batches:list')).find((b) => b.id === id)!
    // The two lines that finished before the cancel are answered and kept; the rest failed.
    expect(done.counts).toMatchObject({ succeeded: 2, failed: 2 })
    expect(s.errors).toEqual([])
  })

  it('the Spend view shows what the batch discount saved, beside what dedup saved', async () => {
    await s.page.getByTestId('nav-spend').click()
    const header = s.page.getByTestId('spend-table').locator('th', { hasText: 'Saved by batch' })
    await header.waitFor()
    const total = s.page.getByTestId('spend-table').getByTestId('spend-totals')
    // The list price (gpt-4o-mini: $0.15 / $0.60 per 1M) minus the batch price, per call.
    const rows = query<{ input: number; output: number; cost: number }>(
      s.db,
      `SELECT input_tokens AS input, output_tokens AS output, cost_micros AS cost FROM ledger
       WHERE price_version LIKE '%+batch' AND cost_micros IS NOT NULL`,
    )
    expect(rows.length).toBeGreaterThan(0)
    const saved = rows.reduce(
      (sum, r) =>
        sum + Math.floor((r.input * 150_000 + r.output * 600_000 + 500_000) / 1e6) - r.cost,
      0,
    )
    expect(saved).toBeGreaterThan(0)
    await until(async () => (await total.getAttribute('data-batch-saved-micros')) === String(saved))
    const cell = total.getByTestId('spend-batch-saved')
    await expect(cell.textContent()).resolves.toBe(formatUsd(saved))
    expect(s.errors).toEqual([])
  })
})
