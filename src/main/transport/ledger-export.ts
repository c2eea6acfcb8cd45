/**
 * The ledger export as both bindings answer it: the desktop writes a file the operator chose
 * (desktop/export-file.ts), the HTTP server streams a download (server/csv-export.ts). Both call
 * the engine's streaming export with the filter of a validated `ledger:export` input.
 */
import type { CommandParsed, LedgerFilter } from '../../shared/contract'

export type ExportKind = CommandParsed<'ledger:export'>['kind']

/** Which ledger rows an export covers: the contract's filter. */
export type ExportFilter = LedgerFilter

/** Whose ledger: this machine's, or the team store's. */
export type ExportScope = NonNullable<CommandParsed<'ledger:export'>['scope']>

/** The engine's streaming CSV export: writes header + rows to `out`, resolves with the row count. */
export type ExportCsv = (
  kind: ExportKind,
  out: NodeJS.WritableStream,
  filter: ExportFilter,
  scope?: ExportScope,
) => Promise<{ rows: number }>

/** `pacer-events-20250131.csv` (`pacer-team-events-…` for the team's): the local date. */
export function exportFileName(
  kind: ExportKind,
  now: Date = new Date(),
  scope: ExportScope = 'machine',
): string {
  const y = now.getFullYear()
  const m = String(now.getMonth() + 1).padStart(2, '0')
  const d = String(now.getDate()).padStart(2, '0')
  return `pacer-${scope === 'team' ? 'team-' : ''}${kind}-${y}${m}${d}.csv`
}

/** The filter half of a validated `ledger:export` input. */
export function exportFilterOf(input: CommandParsed<'ledger:export'>): ExportFilter {
  const filter: ExportFilter = {}
  if (input.since !== undefined) filter.since = input.since
  if (input.until !== undefined) filter.until = input.until
  if (input.batchId !== undefined) filter.batchId = input.batchId
  return filter
}
