import { existsSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { ForecastView } from '../../shared/contract'
import { formatFromName } from '../../shared/batch-format'
import { formatUsd, formatUsdPerM } from '../../shared/format'
import { capForecastLine } from '../../shared/cap-forecast-text'
import { usdToMicros } from '../../shared/money'
import { UsageError, dbPathFrom, openEngine, openReader, table, thousands } from './common'
import { say } from './terminal-text'

/**
 * `pacer forecast FILE`: what a batch will cost before it runs (tokens grow with steps²). The file
 * is read line by line: a million lines take the memory of their distinct tasks, not of the lines.
 */
export async function forecastCommand(
  file: string,
  opts: {
    db?: string
    audit?: boolean
    json?: boolean
    assumeOutputTokens?: number
    budget?: number
  },
): Promise<number> {
  const path = resolve(file)
  try {
    if (!(await stat(path)).isFile()) throw Object.assign(new Error(), { code: 'EISDIR' })
  } catch (err) {
    throw new UsageError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    )
  }
  // Prices, defaults and stored answers come from the database when there is one, opened read
  // only: a forecast creates nothing and changes nothing.
  const dbPath = dbPathFrom(opts.db)
  const engine = existsSync(dbPath) ? openReader(dbPath) : openEngine({ dbPath: ':memory:' })
  try {
    const { forecast, invalidLines } = await engine.batches.forecastFile({
      path,
      format: formatFromName(path),
      audit: opts.audit,
      assumeOutputTokens: opts.assumeOutputTokens,
      budgetMicros: opts.budget === undefined ? undefined : usdToMicros(opts.budget),
      onError: (e) => say.err(`${file}:${e.line}: ${e.field ? `${e.field}: ` : ''}${e.message}\n`),
    })
    if (!forecast) throw new UsageError(`${file}: no valid tasks to forecast`)
    if (opts.json) {
      const { dedup: _dedup, ...view } = forecast
      say.out(`${JSON.stringify({ ...view, invalidLines })}\n`)
    } else {
      printForecast(forecast)
    }
    return invalidLines > 0 ? 2 : 0
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

function printForecast(f: ForecastView): void {
  const row = (r: ForecastView['total']) => [
    r.taskType,
    r.tasks,
    r.distinctTasks,
    r.reused,
    r.calls,
    thousands(r.inputTokens),
    thousands(r.outputTokens),
    formatUsd(r.costMicros),
    formatUsd(r.savedByDedupMicros),
  ]
  say.out(
    `${table(
      [
        'task type',
        'tasks',
        'distinct',
        'reused',
        'calls',
        'input tokens',
        'output tokens',
        'cost',
        'saved by dedup',
      ],
      [...f.byType.map(row), row({ ...f.total, taskType: 'TOTAL' })],
    )}\n`,
  )
  for (const line of forecastNotes(f)) say.out(`${line}\n`)
}

/** What a forecast assumed and reused, in words under its table. */
export function forecastNotes(f: ForecastView): string[] {
  const lines: string[] = []
  if (f.total.reused > 0) {
    lines.push(
      `${thousands(f.total.reused)} task(s) reuse an answer this database already holds: ` +
        'no call, $0',
    )
  }
  lines.push(
    f.assumedOutputTokens === null
      ? 'output tokens: assumed, per step, the size of the simulated answer on sim and the size ' +
          'of the prompt on other providers (set with --assume-output-tokens N)'
      : `output tokens: assumed ${thousands(f.assumedOutputTokens)} per step (--assume-output-tokens)`,
  )
  for (const m of f.models) {
    const price = m.price
      ? `${formatUsdPerM(m.price.input)} input, ${formatUsdPerM(m.price.output)} output per 1M tokens`
      : 'no price: its cost is not included (add one in the console: Settings → Prices)'
    lines.push(`priced against ${m.provider}/${m.model} (${thousands(m.tasks)} task(s)): ${price}`)
  }
  lines.push(`prices: table ${f.priceVersion}`)
  if (f.unpricedTasks > 0) {
    lines.push(`${f.unpricedTasks} task(s) use a model without a price: their cost is not included`)
  }
  for (const c of f.caps) lines.push(capForecastLine(c, f.total.tasks))
  return lines
}
