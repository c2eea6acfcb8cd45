/**
 * The engine's handler map as the desktop binds it. One command needs the desktop's own parts:
 * `ledger:export` and `results:export` answer with a native save dialog and a file (the engine leaves export to the
 * transport). API keys need nothing here: the engine stores them through the SecretsAccess it was
 * given (secrets.ts, the OS keyring). Pure: no Electron import.
 */
import type { CommandHandlers, CommandParsed } from '../../shared/contract'
import {
  exportFileName,
  exportFilterOf,
  type ExportFilter,
  type ExportKind,
  type ExportScope,
} from '../transport/ledger-export'
import { resultsFileName, resultsOptionsOf, type ExportResults } from '../transport/results-export'

export interface DesktopHandlerDeps {
  /** Shows the save dialog; resolves the chosen path, or null when the operator cancels. */
  chooseExportPath(defaultFileName: string, kind: ExportKind | 'results'): Promise<string | null>
  /** Streams the export into `path` (export-file.ts around the engine's exportCsv). */
  exportCsvToFile(
    kind: ExportKind,
    filter: ExportFilter,
    path: string,
    scope?: ExportScope,
  ): Promise<{ rows: number }>
  /** Streams a batch's answers into `path` (export-file.ts around the engine's exportResults). */
  exportResultsToFile(
    options: Parameters<ExportResults>[1],
    path: string,
  ): Promise<{ rows: number }>
  /** @default () => new Date() */
  now?: () => Date
}

/** The handler map the desktop binds to IPC: the engine's, with both exports answered here. */
export function createDesktopHandlers(
  engine: CommandHandlers,
  deps: DesktopHandlerDeps,
): CommandHandlers {
  const now = deps.now ?? (() => new Date())
  return {
    ...engine,
    'ledger:export': async (input: CommandParsed<'ledger:export'>) => {
      const name = exportFileName(input.kind, now(), input.scope)
      const path = await deps.chooseExportPath(name, input.kind)
      // Cancelling the dialog is not an error: nothing was written.
      if (path === null) return { path: null, rows: 0 }
      const filter = exportFilterOf(input)
      const { rows } = await deps.exportCsvToFile(input.kind, filter, path, input.scope)
      return { path, rows }
    },
    'results:export': async (input: CommandParsed<'results:export'>) => {
      const path = await deps.chooseExportPath(resultsFileName(input.format, now()), 'results')
      if (path === null) return { path: null, rows: 0 }
      const { rows } = await deps.exportResultsToFile(resultsOptionsOf(input), path)
      return { path, rows }
    },
  }
}
