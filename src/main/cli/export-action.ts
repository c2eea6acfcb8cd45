// `pacer export`'s choice between a CSV and a trace, each command loaded only when it runs.
import { UsageError } from './errors'

/** `pacer export`: a CSV (--out), or a batch as a trace (--otlp). */
export async function exportAction(opts: {
  out?: string
  otlp?: string
  store?: string
  db?: string
  batch?: string
  json?: boolean
  otlpContent?: boolean
  kind: 'events' | 'summary'
}): Promise<number> {
  if (opts.otlp !== undefined) {
    if (opts.out !== undefined || opts.store) {
      throw new UsageError('--otlp sends a batch of this database: not with --out or --store')
    }
    const { exportOtlpCommand } = await import('./otlp')
    return exportOtlpCommand({ ...opts, otlp: opts.otlp })
  }
  if (opts.otlpContent) throw new UsageError('--otlp-content goes with --otlp URL')
  if (opts.out === undefined) {
    throw new UsageError('export needs --out FILE (CSV) or --otlp URL (a trace)')
  }
  const csv = { ...opts, out: opts.out }
  if (opts.store) {
    const { teamExportCommand } = await import('./team-ledger-commands')
    return teamExportCommand({ ...csv, store: opts.store })
  }
  const { exportCommand } = await import('./ledger-commands')
  return exportCommand(csv)
}
