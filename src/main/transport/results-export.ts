/**
 * The answers' export as both bindings answer it, beside the ledger's (ledger-export.ts): the
 * desktop writes a file the operator chose, the HTTP server streams a download. Both call the
 * engine's streaming results export with the options of a validated `results:export` input.
 */
import type { CommandParsed } from '../../shared/contract'

export type ResultsExportInput = CommandParsed<'results:export'>

/** The engine's streaming export of answers: writes them to `out`, resolves with the count. */
export type ExportResults = (
  out: NodeJS.WritableStream,
  options: { batchId?: string; format: ResultsExportInput['format']; raw?: boolean },
) => Promise<{ rows: number }>

/** `pacer-results-20250131.jsonl`: the local date, as the operator's calendar shows it. */
export function resultsFileName(
  format: ResultsExportInput['format'],
  now: Date = new Date(),
): string {
  const y = now.getFullYear()
  const m = String(now.getMonth() + 1).padStart(2, '0')
  const d = String(now.getDate()).padStart(2, '0')
  return `pacer-results-${y}${m}${d}.${format}`
}

/** The engine's options from a validated input (undefined fields left out). */
export function resultsOptionsOf(input: ResultsExportInput): Parameters<ExportResults>[1] {
  return {
    format: input.format,
    ...(input.batchId !== undefined ? { batchId: input.batchId } : {}),
    ...(input.raw ? { raw: true } : {}),
  }
}
