/**
 * The native menu and its two file actions. The template is plain data and the actions take their
 * dialogs as parameters, so both are tested without Electron. Edit/View/Window use Electron roles:
 * without an Edit menu, Cmd+C / Cmd+V do nothing in macOS text fields.
 */
import { readFile, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import type { MenuItemConstructorOptions } from 'electron'
import { batchFormatOf } from '../../shared/batch-format'
import type { CommandHandlers, LineError } from '../../shared/contract'
import { formatUsd } from '../../shared/format'
import { runCommand } from '../transport/commands'
import type { ExportKind } from '../transport/ledger-export'
import type { PathInstallResult } from '../transport/path-install'

export interface MenuActions {
  importBatch(): void
  exportCsv(kind: ExportKind): void
  /** Puts `pacer` on the user's PATH (transport/path-install.ts); no Help item without it. */
  installCommand?(): void
}

/**
 * The Help menu's "Install 'pacer' command in PATH": the app's launcher linked into the user's bin
 * folder, and what happened said in a message box (the PATH hint included).
 */
export async function installCommandFromMenu(
  install: () => PathInstallResult,
  dialogs: Pick<ImportDialogs, 'info' | 'error'>,
): Promise<void> {
  const result = install()
  const [first, ...rest] = result.message.split('\n')
  if (result.outcome === 'refused') await dialogs.error('pacer was not installed', result.message)
  else await dialogs.info(first ?? '', rest.join('\n'))
}

/** The application menu. `isDev` adds DevTools and reload, which a packaged build leaves out. */
export function buildMenuTemplate(
  actions: MenuActions,
  options: { platform: NodeJS.Platform; isDev: boolean; appName?: string },
): MenuItemConstructorOptions[] {
  const isMac = options.platform === 'darwin'
  const file: MenuItemConstructorOptions = {
    label: 'File',
    submenu: [
      {
        id: 'import-batch',
        label: 'Import batch…',
        accelerator: 'CmdOrCtrl+O',
        click: () => actions.importBatch(),
      },
      {
        id: 'export-csv',
        label: 'Export CSV',
        submenu: [
          {
            id: 'export-events',
            label: 'Ledger events…',
            accelerator: 'CmdOrCtrl+E',
            click: () => actions.exportCsv('events'),
          },
          {
            id: 'export-summary',
            label: 'Summary by task type…',
            accelerator: 'CmdOrCtrl+Shift+E',
            click: () => actions.exportCsv('summary'),
          },
        ],
      },
      { type: 'separator' },
      isMac ? { role: 'close' } : { id: 'quit', role: 'quit', label: 'Quit' },
    ],
  }
  const view: MenuItemConstructorOptions = {
    label: 'View',
    submenu: [
      ...(options.isDev
        ? ([
            { role: 'reload' },
            { role: 'toggleDevTools' },
            { type: 'separator' },
          ] as MenuItemConstructorOptions[])
        : []),
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
    ],
  }
  const install = actions.installCommand
  const help: MenuItemConstructorOptions[] = install
    ? [
        {
          role: 'help',
          submenu: [
            {
              id: 'install-command',
              label: "Install 'pacer' command in PATH",
              click: () => install(),
            },
          ],
        },
      ]
    : []
  return [
    ...(isMac ? [{ label: options.appName ?? 'Pacer', role: 'appMenu' } as const] : []),
    file,
    { role: 'editMenu' },
    view,
    { role: 'windowMenu' },
    ...help,
  ]
}

/** Batch files larger than the contract accepts are refused before being read into memory. */
const MAX_BATCH_FILE_BYTES = 200 * 1024 * 1024

export interface ImportDialogs {
  /** The open-file dialog; null when cancelled. */
  chooseFile(): Promise<string | null>
  /** Asks to go ahead; resolves true for "Import". */
  confirm(message: string, detail: string): Promise<boolean>
  info(message: string, detail: string): Promise<void>
  error(message: string, detail: string): Promise<void>
}

function describeErrors(errors: LineError[], limit = 5): string {
  const lines = errors
    .slice(0, limit)
    .map((e) => `line ${e.line}${e.field ? ` (${e.field})` : ''}: ${e.message}`)
  if (errors.length > limit) lines.push(`…and ${errors.length - limit} more`)
  return lines.join('\n')
}

/**
 * File > Import batch…: choose a file, preview it (valid count, line errors, forecast), confirm,
 * import. Goes through the same validation as the console's own import.
 */
export async function importBatchFromMenu(
  handlers: CommandHandlers,
  dialogs: ImportDialogs,
): Promise<void> {
  const path = await dialogs.chooseFile()
  if (path === null) return
  const fileName = basename(path)
  try {
    const info = await stat(path)
    if (info.size > MAX_BATCH_FILE_BYTES) {
      await dialogs.error(
        `${fileName} is too large to import`,
        `Batch files are limited to ${MAX_BATCH_FILE_BYTES / 1048576} MiB; split it into smaller files.`,
      )
      return
    }
  } catch (err) {
    await dialogs.error(`Could not read ${fileName}`, (err as Error).message)
    return
  }
  const content = await readFile(path, 'utf8')
  const format = batchFormatOf(fileName)
  const base = { fileName, content, ...(format ? { format } : {}) }

  const preview = await runCommand(handlers, 'batches:preview', base)
  if (!preview.ok) {
    await dialogs.error(`Could not read ${fileName}`, preview.error.message)
    return
  }
  const { valid, errors, forecast } = preview.value
  if (valid === 0) {
    await dialogs.error(`${fileName} has no valid tasks`, describeErrors(errors))
    return
  }
  const detail = [
    forecast
      ? `Forecast: ${forecast.total.calls} calls, ${formatUsd(forecast.total.costMicros)}.`
      : '',
    errors.length > 0
      ? `${errors.length} invalid line(s) will be skipped:\n${describeErrors(errors)}`
      : '',
  ]
    .filter(Boolean)
    .join('\n\n')
  const go = await dialogs.confirm(`Import ${valid} task(s) from ${fileName}?`, detail)
  if (!go) return

  const imported = await runCommand(handlers, 'batches:import', {
    ...base,
    skipInvalid: errors.length > 0,
  })
  if (!imported.ok) {
    await dialogs.error(`Could not import ${fileName}`, imported.error.message)
    return
  }
  const result = imported.value
  await dialogs.info(
    `Queued ${result.enqueued} task(s)`,
    `Batch ${result.batchId ?? '—'}${result.skipped ? `, ${result.skipped} line(s) skipped` : ''}.`,
  )
}

/** File > Export CSV: runs the desktop's ledger:export (save dialog + file) and reports. */
export async function exportCsvFromMenu(
  handlers: CommandHandlers,
  kind: ExportKind,
  dialogs: Pick<ImportDialogs, 'info' | 'error'>,
): Promise<void> {
  const reply = await runCommand(handlers, 'ledger:export', { kind })
  if (!reply.ok) {
    await dialogs.error('Export failed', reply.error.message)
    return
  }
  const { path, rows } = reply.value
  if (path !== null) await dialogs.info(`Exported ${rows} row(s)`, path)
}
