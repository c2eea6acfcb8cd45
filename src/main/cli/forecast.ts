import { existsSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { ForecastView } from '../../shared/contract'
import { formatFromName } from '../../shared/batch-format'
import { formatUsd } from '../../shared/money'
import { UsageError, dbPathFrom, openEngine, table, thousands } from './common'

/**
 * `pacer forecast FILE`: what a batch will cost before it runs (tokens grow with steps²). The file
 * is read line by line: a million lines take the memory of their distinct tasks, not of the lines.
 */
export async function forecastCommand(
  file: string,
  opts: { db?: string; audit?: boolean; json?: boolean },
): Promise<number> {
  const path = resolve(file)
  try {
    if (!(await stat(path)).isFile()) throw Object.assign(new Error(), { code: 'EISDIR' })
  } catch (err) {
    throw new UsageError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    )
  }
  // Prices and defaults come from the database when there is one; a forecast creates nothing.
  const dbPath = dbPathFrom(opts.db)
  const engine = openEngine({ dbPath: existsSync(dbPath) ? dbPath : ':memory:' })
  try {
    const { forecast, invalidLines } = await engine.batches.forecastFile({
      path,
      format: formatFromName(path),
      audit: opts.audit,
      onError: (e) =>
        process.stderr.write(`${file}:${e.line}: ${e.field ? `${e.field}: ` : ''}${e.message}\n`),
    })
    if (!forecast) throw new UsageError(`${file}: no valid tasks to forecast`)
    if (opts.json) {
      const { byType, total, unpricedTasks } = forecast
      process.stdout.write(`${JSON.stringify({ byType, total, unpricedTasks, invalidLines })}\n`)
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
    r.calls,
    thousands(r.inputTokens),
    thousands(r.outputTokens),
    formatUsd(r.costMicros),
    formatUsd(r.savedByDedupMicros),
  ]
  process.stdout.write(
    `${table(
      [
        'task type',
        'tasks',
        'distinct',
        'calls',
        'input tokens',
        'output tokens',
        'cost',
        'saved by dedup',
      ],
      [...f.byType.map(row), row({ ...f.total, taskType: 'TOTAL' })],
    )}\n`,
  )
  if (f.unpricedTasks > 0) {
    process.stdout.write(
      `${f.unpricedTasks} task(s) use a model without a price: their cost is not included\n`,
    )
  }
}
