import { createWriteStream } from 'node:fs'
import { resolve } from 'node:path'
import { once } from 'node:events'
import { PassThrough } from 'node:stream'
import type { TypeRollupView } from '../../shared/contract'
import { formatUsd, microsToUsd } from '../../shared/money'
import { UsageError, existingDbPath, openEngine, table, thousands } from './common'

/** `pacer summary`: the rollup per task type, as a table or JSON. */
export async function summaryCommand(opts: { db?: string; json?: boolean }): Promise<number> {
  const engine = openEngine({ dbPath: existingDbPath(opts.db) })
  try {
    const { byType, totals } = await engine.handlers['ledger:rollup']({})
    if (opts.json) {
      const view = (r: TypeRollupView) => ({
        taskType: r.taskType,
        runs: r.runs,
        executed: r.executed,
        reused: r.reused,
        duplicates: r.duplicates,
        avgInputTokens: r.avgInputTokens,
        inputTokens: r.inputTokens,
        cachedInputTokens: r.cachedInputTokens,
        cacheWriteTokens: r.cacheWriteTokens,
        outputTokens: r.outputTokens,
        totalTokens: r.totalTokens,
        costUsd: microsToUsd(r.costMicros),
        costMicros: r.costMicros,
        savedUsd: microsToUsd(r.savedMicros),
        savedMicros: r.savedMicros,
        wastedUsd: microsToUsd(r.wastedMicros),
        wastedMicros: r.wastedMicros,
        cacheSavedUsd: microsToUsd(r.cacheSavedMicros),
        cacheSavedMicros: r.cacheSavedMicros,
        cacheWriteExtraUsd: microsToUsd(r.cacheWriteExtraMicros),
        cacheWriteExtraMicros: r.cacheWriteExtraMicros,
        unpricedCalls: r.unpricedCalls,
        throttled: r.throttled,
        errors: r.errors,
        abandoned: r.abandoned,
      })
      process.stdout.write(
        `${JSON.stringify({ byType: byType.map(view), totals: view(totals), dbPath: engine.dbPath })}\n`,
      )
      return 0
    }
    if (byType.length === 0) {
      process.stdout.write(
        `the ledger at ${engine.dbPath} is empty: run a batch first (pacer run FILE.jsonl, or npm run demo)\n`,
      )
      return 0
    }
    const row = (r: TypeRollupView) => [
      r.taskType,
      r.runs,
      r.executed,
      r.reused,
      r.duplicates,
      thousands(r.avgInputTokens),
      thousands(r.totalTokens),
      formatUsd(r.costMicros) + (r.unpricedCalls ? ` (+${r.unpricedCalls} unpriced)` : ''),
      formatUsd(r.savedMicros),
      formatUsd(r.wastedMicros),
      // Net: what cache reads saved minus what cache writes cost above the input price.
      formatUsd(r.cacheSavedMicros - r.cacheWriteExtraMicros),
    ]
    process.stdout.write(
      `${table(
        [
          'task type',
          'runs',
          'executed',
          'reused',
          'duplicates',
          'avg input',
          'total tokens',
          'cost',
          'saved',
          'wasted',
          'cache saved',
        ],
        [...byType.map(row), row({ ...totals, taskType: 'TOTAL' })],
      )}\n${cacheLine(totals)}`,
    )
    return 0
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** The prompt cache's part of the totals, one line; nothing when no call used a cache. */
function cacheLine(t: Omit<TypeRollupView, 'taskType'>): string {
  if (t.cachedInputTokens === 0 && t.cacheWriteTokens === 0) return ''
  return (
    `prompt cache: ${thousands(t.cachedInputTokens)} input tokens read from it ` +
    `(saved ${formatUsd(t.cacheSavedMicros)}), ${thousands(t.cacheWriteTokens)} written to it ` +
    `(${formatUsd(t.cacheWriteExtraMicros)} above the input price): ` +
    `net ${formatUsd(t.cacheSavedMicros - t.cacheWriteExtraMicros)}\n`
  )
}

/** `pacer export --out FILE.csv`: streams the ledger (events or summary) to a file; `-` is stdout. */
export async function exportCommand(opts: {
  db?: string
  out: string
  kind: 'events' | 'summary'
}): Promise<number> {
  const engine = openEngine({ dbPath: existingDbPath(opts.db) })
  try {
    if (opts.out === '-') {
      const rows = await exportToStdout(engine, opts.kind)
      // The reader went away (`pacer export --out - | head`): like any filter, stop quietly.
      if (rows === null) return 0
      process.stderr.write(`wrote ${rows} ${opts.kind} row(s) to stdout\n`)
      return 0
    }
    const path = resolve(opts.out)
    const out = createWriteStream(path)
    const opened = once(out, 'open').then(
      () => null,
      (err: NodeJS.ErrnoException) => err,
    )
    const failed = await opened
    if (failed) throw new UsageError(`cannot write ${path}: ${failed.code ?? failed.message}`)
    const { rows } = await engine.exportCsv(opts.kind, out)
    if (!out.writableFinished) await once(out, 'finish')
    process.stderr.write(`wrote ${rows} ${opts.kind} row(s) to ${path}\n`)
    return 0
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/**
 * Streams the CSV to process.stdout without ending it (exportCsv ends the stream it is given, and an
 * ended stdout would swallow anything printed after): the CSV goes through a PassThrough piped with
 * `end: false`, which keeps backpressure. Returns the row count, or null when stdout was closed by
 * its reader (EPIPE) before the end.
 */
async function exportToStdout(
  engine: ReturnType<typeof openEngine>,
  kind: 'events' | 'summary',
): Promise<number | null> {
  const stdout = process.stdout
  const relay = new PassThrough()
  let closed: NodeJS.ErrnoException | null = null
  const onError = (err: NodeJS.ErrnoException) => {
    closed = err
    relay.destroy(err)
  }
  stdout.on('error', onError)
  relay.pipe(stdout, { end: false })
  try {
    const { rows } = await engine.exportCsv(kind, relay)
    // Everything was written into the relay; wait until it has all been handed to stdout.
    if (!relay.readableEnded) await once(relay, 'end')
    if (stdout.writableNeedDrain) await once(stdout, 'drain')
    return rows
  } catch (err) {
    if ((closed as NodeJS.ErrnoException | null)?.code === 'EPIPE') return null
    throw closed ?? err
  } finally {
    relay.unpipe(stdout)
    stdout.off('error', onError)
  }
}

/** `pacer batches`: what is queued, running, interrupted or done, with task counts. */
export async function batchesCommand(opts: { db?: string; json?: boolean }): Promise<number> {
  const engine = openEngine({ dbPath: existingDbPath(opts.db) })
  try {
    const batches = await engine.handlers['batches:list']({})
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ batches })}\n`)
      return 0
    }
    if (batches.length === 0) {
      process.stdout.write(`no batches in ${engine.dbPath}: run one with pacer run FILE.jsonl\n`)
      return 0
    }
    const rows = batches.map((b) => [
      b.id,
      b.name,
      b.state,
      b.total,
      b.counts.succeeded,
      b.counts.reused,
      b.counts.failed,
      b.counts.cancelled,
      b.counts.queued + b.counts.running,
      new Date(b.createdAt).toISOString().replace('T', ' ').slice(0, 19),
    ])
    process.stdout.write(
      `${table(
        [
          'batch',
          'name',
          'state',
          'tasks',
          'succeeded',
          'reused',
          'failed',
          'cancelled',
          'left',
          'created (UTC)',
        ],
        rows,
      )}\n`,
    )
    return 0
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}
