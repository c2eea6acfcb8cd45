/**
 * Streams the engine's CSV export into a file the operator chose. Writes `<path>.part` and renames
 * it at the end, so a failed or interrupted export never leaves a truncated CSV under the chosen
 * name (finance would import it as if it were complete). A path that is the database or one of
 * its companions (-wal, -shm, -journal; through a link too) is refused before anything is
 * written: the rename would put the CSV where the ledger was.
 */
import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { finished } from 'node:stream/promises'
import { databaseFileAt, describeDatabaseFile } from '../engine'
import type { ExportCsv, ExportFilter, ExportKind, ExportScope } from '../transport/ledger-export'
import type { ExportResults } from '../transport/results-export'

/** Writes the export to `path`; resolves with the row count once the file is complete. */
export function exportCsvToFile(
  exportCsv: ExportCsv,
  kind: ExportKind,
  filter: ExportFilter,
  path: string,
  database: string,
  scope?: ExportScope,
): Promise<{ rows: number }> {
  return writeExportFile(path, database, (out) => exportCsv(kind, out, filter, scope))
}

/** Writes a batch's answers to `path`, the same way (`.part`, then renamed). */
export function exportResultsToFile(
  exportResults: ExportResults,
  options: Parameters<ExportResults>[1],
  path: string,
  database: string,
): Promise<{ rows: number }> {
  return writeExportFile(path, database, (out) => exportResults(out, options))
}

async function writeExportFile(
  path: string,
  database: string,
  write: (out: NodeJS.WritableStream) => Promise<{ rows: number }>,
): Promise<{ rows: number }> {
  const partial = `${path}.part`
  for (const file of [path, partial]) {
    const suffix = databaseFileAt(file, database)
    if (suffix !== null) {
      throw new Error(
        `${file} is ${describeDatabaseFile(suffix)}: writing there would destroy the ledger; choose another file`,
      )
    }
  }
  const out = createWriteStream(partial, { flags: 'w', mode: 0o644 })
  // Before the first write: an unwritable folder surfaces as the export's error, not a crash.
  const opened = new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve())
    out.once('error', reject)
  })
  try {
    await opened
    const { rows } = await write(out)
    if (!out.writableEnded) out.end()
    await finished(out)
    await rename(partial, path)
    return { rows }
  } catch (err) {
    out.destroy()
    await rm(partial, { force: true })
    throw err
  }
}
