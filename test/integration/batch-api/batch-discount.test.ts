// Issue 22, point 3: what the batch discount saved, beside what dedup saved, in `pacer summary`
// (table and --json) and both CSV exports, after a real `pacer run --batch-api` through each
// double. The expected figures are computed here from the list prices of the price table
// (LIST_PRICES) and the double's own bill at the batch rate, never read back from Pacer's code.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { formatUsd } from '../../../src/shared/format'
import { query, runPacer } from '../../helpers/cli'
import { batchCostMicros } from '../../helpers/batch-vendor/answers'
import { harness, LIST_PRICES, MODELS, type Dialect, type Harness } from './batch-helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

/** A call at the list price, rounded once half up as the vendors' invoices are. */
function listMicros(input: number, output: number, price: { input: number; output: number }) {
  const rate = (usdPerM: number) => BigInt(Math.round(usdPerM * 1e6))
  const scaled = BigInt(input) * rate(price.input) + BigInt(output) * rate(price.output)
  return Number((scaled + 500_000n) / 1_000_000n)
}

/** `0.001234` as the CSVs write micro-dollars. */
const csvUsd = (micros: number) => (micros / 1e6).toFixed(6)

function csv(path: string): Record<string, string>[] {
  const [head, ...lines] = readFileSync(path, 'utf8').trim().split(/\r?\n/)
  const headers = head!.split(',')
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [headers[i]!, v])))
}

describe.each<Dialect>(['openai', 'anthropic'])('batch discount in the ledger (%s)', (dialect) => {
  it('summary and CSVs show list minus batch price beside dedup saved', async () => {
    h = await harness({ errorShare: 0 })
    // 30 tasks, 20 distinct: ten answered from the first one's result (dedup), none live.
    const tasks = Array.from({ length: 30 }, (_, i) => ({ type: 'label', payload: { i: i % 20 } }))
    const file = h.file('discount.jsonl', tasks)
    h.tick()
    const run = await h.run(dialect, file)
    expect(run.code, run.stderr).toBe(0)
    expect(h.submitted(dialect)).toHaveLength(20)

    const price = LIST_PRICES[MODELS[dialect] as keyof typeof LIST_PRICES]
    const rows = query<{
      id: number
      input_tokens: number
      output_tokens: number
      cost_micros: number
      outcome: string
    }>(
      h.db,
      `SELECT id, input_tokens, output_tokens, cost_micros, outcome FROM ledger
       WHERE price_version LIKE '%+batch' ORDER BY id`,
    )
    expect(rows).toHaveLength(20)
    const expected = new Map<number, number>()
    for (const r of rows) {
      const answer = { text: '', inputTokens: r.input_tokens, outputTokens: r.output_tokens }
      // Billed at the double's batch price; saved the list price minus that.
      expect(r.cost_micros).toBe(batchCostMicros(answer, price))
      expected.set(r.id, listMicros(r.input_tokens, r.output_tokens, price) - r.cost_micros)
    }
    const saved = [...expected.values()].reduce((a, b) => a + b, 0)
    const billed = rows.reduce((a, r) => a + r.cost_micros, 0)
    expect(billed).toBe(h.vendor.billMicros(LIST_PRICES))
    expect(saved).toBeGreaterThan(0)

    // pacer summary --json: the totals carry the three new fields, last.
    const json = JSON.parse((await runPacer(['summary', '--db', h.db, '--json'])).stdout) as {
      totals: Record<string, number>
    }
    expect(json.totals).toMatchObject({
      batchCalls: 20,
      batchCostMicros: billed,
      batchSavedMicros: saved,
      reused: 10,
    })
    expect(Object.keys(json.totals).slice(-5)).toEqual([
      'batchCalls',
      'batchCostUsd',
      'batchCostMicros',
      'batchSavedUsd',
      'batchSavedMicros',
    ])
    const dedup = json.totals.savedMicros!
    expect(dedup).toBeGreaterThan(0)

    // pacer summary: a 'batch saved' column, last, beside dedup's 'saved'.
    const table = (await runPacer(['summary', '--db', h.db])).stdout
    const header = table
      .split('\n')[0]!
      .trim()
      .split(/\s{2,}/)
    expect(header.at(-1)).toBe('batch saved')
    const total = table.split('\n').find((l) => l.trimStart().startsWith('TOTAL'))!
    expect(
      total
        .trim()
        .split(/\s{2,}/)
        .at(-1),
    ).toBe(formatUsd(saved))
    expect(table).toContain(
      `the discount saved ${formatUsd(saved)} (dedup saved ${formatUsd(dedup)})`,
    )

    // The events CSV: batch_saved_usd last, per row; 0 on the reuses (no call, no discount).
    const events = join(h.dir, 'events.csv')
    expect((await runPacer(['export', '--db', h.db, '--out', events])).code).toBe(0)
    const lines = csv(events)
    expect(Object.keys(lines[0]!).at(-1)).toBe('batch_saved_usd')
    for (const l of lines) {
      const want = expected.get(Number(l.id))
      expect(l.batch_saved_usd, `row ${l.id}`).toBe(csvUsd(want ?? 0))
    }

    // The summary CSV: batch_calls, batch_cost_usd, batch_saved_usd appended at the end.
    const summary = join(h.dir, 'summary.csv')
    const exported = await runPacer(['export', '--db', h.db, '--kind', 'summary', '--out', summary])
    expect(exported.code).toBe(0)
    const [label] = csv(summary)
    expect(Object.keys(label!).slice(-3)).toEqual([
      'batch_calls',
      'batch_cost_usd',
      'batch_saved_usd',
    ])
    expect(label).toMatchObject({
      task_type: 'label',
      batch_calls: '20',
      batch_cost_usd: csvUsd(billed),
      batch_saved_usd: csvUsd(saved),
      saved_usd: csvUsd(dedup),
    })
  }, 180_000)
})
