import type { ResultsFormat } from '../../shared/contract'
import { UsageError, dbPathFrom, openReader } from './common'
import type { Engine } from '../engine'
import { say } from './terminal-text'
import { refuseDatabase, streamOut } from './stream-out'

export interface ResultsOptions {
  db?: string
  batch?: string
  all?: boolean
  /** `-` (the default) is stdout. */
  out?: string
  format: ResultsFormat
  raw?: boolean
}

/**
 * `pacer results`: every task's answer of a batch (the latest one unless --batch or --all), one
 * record per task in input order, streamed; a batch still running shows what it has so far.
 */
export async function resultsCommand(opts: ResultsOptions): Promise<number> {
  if (opts.all && opts.batch !== undefined) {
    throw new UsageError('--batch and --all exclude each other: name one batch, or take them all')
  }
  // Before the database is opened: opening it read only leaves its -wal and -shm behind.
  refuseDatabase(opts.out ?? '-', dbPathFrom(opts.db))
  const engine = openReader(opts.db)
  try {
    let batchIds: string[]
    try {
      batchIds = engine.results.batchIds({ batchId: opts.batch, all: opts.all })
    } catch (err) {
      if ((err as { code?: string }).code === 'unknown_batch') {
        throw new UsageError(
          `--batch: no batch ${opts.batch} in ${engine.dbPath} (see pacer batches)`,
        )
      }
      throw err
    }
    if (batchIds.length === 0) {
      say.err(`no batches in ${engine.dbPath}: run one with pacer run FILE.jsonl\n`)
      return 0
    }
    const options = { all: opts.all, batchId: batchIds[0], format: opts.format, raw: opts.raw }
    const done = await streamOut(
      opts.out ?? '-',
      (out) => engine.exportResults(out, options),
      engine.dbPath,
    )
    if (!done) return 0
    const of = opts.all ? `${batchIds.length} batch(es)` : `batch ${batchIds[0]}`
    say.err(
      `wrote ${done.rows} answer(s) of ${of} to ${done.where}${unfinished(engine, batchIds)}\n`,
    )
    return 0
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** A note when some tasks have no answer yet: the batch is still running, or was interrupted. */
function unfinished(engine: Engine, batchIds: string[]): string {
  let open = 0
  for (const id of batchIds) {
    const p = engine.queue.progress(id)
    if (p) open += p.unfinished
  }
  return open > 0 ? ` (${open} task(s) not finished yet: they have no answer)` : ''
}
