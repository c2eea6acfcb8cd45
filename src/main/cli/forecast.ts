import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { ForecastView } from '../../shared/contract'
import { formatUsd } from '../../shared/money'
import { UsageError, dbPathFrom, openEngine, table, thousands } from './common'

/** `pacer forecast FILE`: what a batch will cost before it runs (tokens grow with steps²). */
export async function forecastCommand(
  file: string,
  opts: { db?: string; audit?: boolean; json?: boolean },
): Promise<number> {
  const path = resolve(file)
  let content: string
  try {
    content = await readFile(path, 'utf8')
  } catch (err) {
    throw new UsageError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    )
  }
  // Prices and defaults come from the database when there is one; a forecast creates nothing.
  const dbPath = dbPathFrom(opts.db)
  const engine = openEngine({ dbPath: existsSync(dbPath) ? dbPath : ':memory:' })
  try {
    const preview = await engine.handlers['batches:preview']({
      fileName: path,
      content,
      audit: opts.audit,
    })
    for (const e of preview.errors) {
      process.stderr.write(`${file}:${e.line}: ${e.field ? `${e.field}: ` : ''}${e.message}\n`)
    }
    if (!preview.forecast) throw new UsageError(`${file}: no valid tasks to forecast`)
    if (opts.json) {
      process.stdout.write(
        `${JSON.stringify({ ...preview.forecast, invalidLines: preview.errors.length })}\n`,
      )
    } else {
      printForecast(preview.forecast)
    }
    return preview.errors.length > 0 ? 2 : 0
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
