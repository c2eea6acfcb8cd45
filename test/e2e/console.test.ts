// The console as an operator uses it: real Chromium (Debian's) driving the built renderer served
// by a real `pacer serve` on a temporary database, with the simulated provider behind it.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { ROOT, query, runPacer, shuffle, until } from '../helpers/cli'

const SHOTS = join(ROOT, 'test-results', 'screenshots')

const s = consoleSession({
  name: 'main',
  acceptDownloads: true,
  prepare() {
    mkdirSync(SHOTS, { recursive: true })
    // Slow enough calls that a batch is still running while the views are checked.
    return { args: ['--sim-latency-scale', '4'] }
  },
})

function jsonl(tasks: unknown[]): Buffer {
  return Buffer.from(tasks.map((t) => JSON.stringify(t)).join('\n') + '\n')
}

async function importFile(name: string, content: Buffer): Promise<void> {
  await s.page.getByTestId('nav-queue').click()
  await s.page.getByTestId('import-file').setInputFiles({
    name,
    mimeType: 'application/x-ndjson',
    buffer: content,
  })
}

describe('the console over pacer serve', () => {
  it('starts on an empty state that says what to do, over the HTTP transport', async () => {
    await expect(s.page.getByTestId('transport').textContent()).resolves.toMatch(/HTTP/i)
    await expect(s.page.getByTestId('queue-view').textContent()).resolves.toMatch(/import/i)
    // The token left the address bar once read.
    expect(s.served.token.length).toBeGreaterThanOrEqual(32)
    expect(s.page.url()).not.toContain(s.served.token)
  })

  it('a malformed line in an imported file shows its line number and queues nothing', async () => {
    const bad = Buffer.from(
      [
        JSON.stringify({ type: 'ok', payload: { n: 1 } }),
        JSON.stringify({ type: 'ok', payload: { n: 2 } }),
        '{"type": "broken", "payload": {',
        JSON.stringify({ payload: { n: 4 } }),
      ].join('\n'),
    )
    await importFile('bad.jsonl', bad)
    const errors = s.page.getByTestId('import-error-item')
    await errors.first().waitFor()
    await expect(errors.count()).resolves.toBe(2)
    await expect(errors.nth(0).textContent()).resolves.toMatch(/line 3.*not valid JSON/)
    await expect(errors.nth(1).textContent()).resolves.toMatch(/line 4.*type/)
    await expect(s.page.getByTestId('import-confirm').isDisabled()).resolves.toBe(true)
    expect(await s.served.api<unknown[]>('batches:list')).toHaveLength(0)
  })

  it('imports a batch with duplicates; rows progress to done and reused; views update live', async () => {
    const distinct = Array.from({ length: 90 }, (_, i) => ({
      type: ['summarize', 'classify', 'research-agent'][i % 3],
      payload: { prompt: `Task ${i}: ${'context '.repeat(50 + (i % 7) * 20)}` },
      ...(i % 3 === 2 ? { steps: 3 } : {}),
    }))
    const duplicates = distinct.filter((_, i) => i % 4 === 0)
    await importFile('batch.jsonl', jsonl(shuffle([...distinct, ...duplicates], 3)))
    await s.page.getByTestId('import-forecast').waitFor()
    await expect(s.page.getByTestId('import-valid').textContent()).resolves.toContain('113')
    await s.page.getByTestId('import-confirm').click()
    await s.page.getByTestId('batch-row').first().waitFor()

    const [batch] = await s.served.api<{ id: string; total: number }[]>('batches:list')
    expect(batch!.total).toBe(113)
    await until(async () => (await s.page.getByTestId('task-row').count()) > 0)
    await until(() => query(s.db, `SELECT 1 FROM tasks WHERE status='succeeded'`).length >= 5)
    await s.page.screenshot({ path: join(SHOTS, 'queue.png') })

    // Concurrency: the chart receives samples while the batch runs.
    await s.page.getByTestId('nav-concurrency').click()
    const chart = s.page.locator('[data-testid^="concurrency-chart-"]').first()
    await chart.waitFor()
    const samplesAt = async () => Number(await chart.getAttribute('data-samples'))
    const before = await samplesAt()
    await until(async () => (await samplesAt()) >= before + 4, 10_000, 100)
    await s.page.screenshot({ path: join(SHOTS, 'concurrency.png') })

    // Moving the max slider changes the engine's limit, read back through the API.
    await s.page.getByTestId('slider-max').fill('3')
    const partition = await until<{ limit: number }>(async () => {
      const parts =
        await s.served.api<{ partition: string; params: { max: number }; limit: number }[]>(
          'scheduler:get',
        )
      const p = parts.find((x) => x.partition === 'sim:sim-small')
      return p && p.params.max === 3 ? p : undefined
    }, 10_000)
    expect(partition.limit).toBeLessThanOrEqual(3)
    // The slider shows the value the scheduler reports back.
    await until(
      async () => (await s.page.getByTestId('slider-max').getAttribute('data-applied')) === '3',
    )

    await until(() => query(s.db, `SELECT 1 FROM tasks WHERE status='reused'`).length >= 8, 30_000)
    await s.page.getByTestId('nav-spend').click()
    await s.page.getByTestId('spend-table').waitFor()
    await until(
      async () => Number(await s.page.getByTestId('spend-totals').getAttribute('data-reused')) > 0,
      10_000,
    )
    await s.page.screenshot({ path: join(SHOTS, 'spend.png') })

    // Let it finish: every task done, the duplicates reused, none executed twice.
    await s.served.api('scheduler:set', { partition: 'sim:sim-small', params: { max: 12 } })
    await until(
      () => query(s.db, `SELECT 1 FROM tasks WHERE status IN ('queued','running')`).length === 0,
      90_000,
      200,
    )
    const statuses = query<{ status: string; n: number }>(
      s.db,
      'SELECT status, COUNT(*) AS n FROM tasks GROUP BY status ORDER BY status',
    )
    expect(statuses).toEqual([
      { status: 'reused', n: 23 },
      { status: 'succeeded', n: 90 },
    ])
    await s.page.getByTestId('nav-queue').click()
    await until(async () => {
      const text = (await s.page.getByTestId('batch-row').first().textContent()) ?? ''
      return /113 \/ 113/.test(text)
    }, 10_000)
    await s.page.getByTestId('status-chip-reused').click()
    await until(async () => {
      const cells = await s.page.getByTestId('task-status').allTextContents()
      return cells.length > 0 && cells.every((c) => c.trim() === 'reused')
    }, 10_000)
  })

  it("the spend table's totals equal `pacer summary --json` for the same database", async () => {
    const summary = await runPacer(['summary', '--db', s.db, '--json'])
    expect(summary.code, summary.stderr).toBe(0)
    const { totals } = JSON.parse(summary.stdout) as {
      totals: Record<string, number | null>
    }
    await s.page.getByTestId('nav-spend').click()
    await s.page.getByTestId('range-all').click()
    const row = s.page.getByTestId('spend-totals')
    const read = async () => ({
      runs: Number(await row.getAttribute('data-runs')),
      executed: Number(await row.getAttribute('data-executed')),
      reused: Number(await row.getAttribute('data-reused')),
      duplicates: Number(await row.getAttribute('data-duplicates')),
      totalTokens: Number(await row.getAttribute('data-total-tokens')),
      costMicros: Number(await row.getAttribute('data-cost-micros')),
      savedMicros: Number(await row.getAttribute('data-saved-micros')),
      wastedMicros: Number(await row.getAttribute('data-wasted-micros')),
    })
    const expected = {
      runs: totals.runs,
      executed: totals.executed,
      reused: totals.reused,
      duplicates: totals.duplicates,
      totalTokens: totals.totalTokens,
      costMicros: totals.costMicros,
      savedMicros: totals.savedMicros,
      wastedMicros: totals.wastedMicros,
    }
    expect(expected).toMatchObject({ runs: 113, executed: 90, reused: 23 })
    await until(async () => JSON.stringify(await read()) === JSON.stringify(expected), 10_000, 200)
    expect(await read()).toEqual(expected)
  })

  it('Export CSV downloads a file whose rows equal the ledger', async () => {
    await s.page.getByTestId('nav-spend').click()
    const [download] = await Promise.all([
      s.page.waitForEvent('download'),
      s.page.getByTestId('export-events').click(),
    ])
    const file = await download.path()
    const rows = parse(readFileSync(file, 'utf8'), { columns: true }) as Record<string, string>[]
    const ledger = query<{ id: number; outcome: string; cost_micros: number | null }>(
      s.db,
      'SELECT id, outcome, cost_micros FROM ledger ORDER BY id',
    )
    expect(rows).toHaveLength(ledger.length)
    expect(rows.map((r) => Number(r.id))).toEqual(ledger.map((r) => r.id))
    expect(rows.map((r) => r.outcome)).toEqual(ledger.map((r) => r.outcome))
    const csvCost = rows.reduce((n, r) => n + Math.round(Number(r.cost_usd || 0) * 1e6), 0)
    const dbCost = ledger.reduce((n, r) => n + (r.cost_micros ?? 0), 0)
    expect(csvCost).toBe(dbCost)
  })

  it('the task table stays virtualized and scrollable with 100k tasks', async () => {
    const content = Array.from({ length: 100_000 }, (_, i) =>
      JSON.stringify({ type: 'bulk', payload: { i } }),
    ).join('\n')
    const imported = await s.served.api<{ batchId: string; enqueued: number }>('batches:import', {
      fileName: 'bulk.jsonl',
      content,
    })
    expect(imported.enqueued).toBe(100_000)
    await s.served.api('batches:pause', { batchId: imported.batchId })

    await s.page.getByTestId('nav-queue').click()
    await s.page.getByTestId('status-chip-all').click()
    await until(
      async () => (await s.page.locator(`option[value="${imported.batchId}"]`).count()) === 1,
    )
    await s.page.getByTestId('batch-filter').selectOption(imported.batchId)
    const table = s.page.getByTestId('task-table')
    await until(async () => (await table.getAttribute('aria-rowcount')) === '100000', 15_000)
    await until(async () => (await s.page.getByTestId('task-row').count()) > 0, 10_000)
    // Only a window of rows is in the page, however long the list.
    expect(await s.page.getByTestId('task-row').count()).toBeLessThan(200)

    // Jump to the end: the last task is fetched and drawn.
    const body = table.locator('.tt-body')
    await body.evaluate((el) => (el.scrollTop = el.scrollHeight))
    const lastId = query<{ id: number }>(s.db, 'SELECT MAX(id) AS id FROM tasks')[0]!.id
    await until(
      async () => (await s.page.locator(`[data-task-id="${lastId}"]`).count()) === 1,
      10_000,
    )
    expect(await s.page.getByTestId('task-row').count()).toBeLessThan(200)

    await s.served.api('batches:cancel', { batchId: imported.batchId })
  })

  it('logged no page errors', () => {
    expect(s.errors).toEqual([])
  })
})
