/**
 * The Electron shell: app lifecycle, the console window, the engine behind IPC, the native menu,
 * safeStorage for API keys. Everything with a decision in it lives in the small Electron-free
 * modules beside this file (and is unit-tested there); this file only wires Electron to them.
 */
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  safeStorage,
  session,
  shell,
  type MessageBoxOptions,
  type OpenDialogOptions,
  type SaveDialogOptions,
} from 'electron'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { installOnPath, type PathInstallResult } from '../transport/path-install'
import { createAppUrlMatcher } from './app-url'
import { watchBudgetNotifications } from './budget-notifications'
import { createDesktopHandlers } from './desktop-handlers'
import { exportCsvToFile, exportResultsToFile } from './export-file'
import { guardNavigation } from './external-links'
import { bindIpc, createTrustedSenderCheck, forwardEvents } from './ipc'
import { installGracefulQuit } from './lifecycle'
import {
  buildMenuTemplate,
  exportCsvFromMenu,
  importBatchFromMenu,
  installCommandFromMenu,
  type ImportDialogs,
} from './menu'
import { missingNativeBindingMessage, nativeBindingPath } from './native-binding'
import { consoleOtlp } from '../engine'
import { openDesktopEngine } from './open-engine'
import { createSecretStore } from './secrets'
import {
  CONTENT_SECURITY_POLICY,
  createWindowOptions,
  devContentSecurityPolicy,
  hardenSession,
} from './window-options'

/** How long running provider calls may take to finish when the operator quits. */
const SHUTDOWN_GRACE_MS = 10_000

const rendererDir = join(__dirname, '../renderer')
const preloadPath = join(__dirname, '../preload/index.js')
// electron-vite sets this for `electron-vite dev`; a packaged app must never load a URL from env.
const devServerUrl = app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL
const isAppUrl = createAppUrlMatcher({ rendererDir, devServerUrl })

let mainWindow: BrowserWindow | null = null

function fatal(title: string, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err)
  console.error(`pacer: ${title}:`, err)
  dialog.showErrorBox(title, message)
  app.exit(1)
}

function focusMainWindow(): void {
  if (!mainWindow) return
  if (mainWindow.isMinimized()) mainWindow.restore()
  mainWindow.show()
  mainWindow.focus()
}

function windowIcon(): string | undefined {
  // macOS and Windows take the icon from the app bundle / executable; Linux needs it per window.
  if (process.platform !== 'linux') return undefined
  return app.isPackaged
    ? join(process.resourcesPath, 'icon.png')
    : join(app.getAppPath(), 'resources', 'icon.png')
}

const dialogs: ImportDialogs = {
  async chooseFile() {
    const options: OpenDialogOptions = {
      title: 'Import batch',
      properties: ['openFile'],
      filters: [
        { name: 'Batch files', extensions: ['jsonl', 'ndjson', 'csv'] },
        { name: 'All files', extensions: ['*'] },
      ],
    }
    const result = mainWindow
      ? await dialog.showOpenDialog(mainWindow, options)
      : await dialog.showOpenDialog(options)
    return result.canceled ? null : (result.filePaths[0] ?? null)
  },
  async confirm(message, detail) {
    const result = await messageBox({
      type: 'question',
      buttons: ['Import', 'Cancel'],
      defaultId: 0,
      cancelId: 1,
      message,
      detail,
    })
    return result === 0
  },
  async info(message, detail) {
    await messageBox({ type: 'info', buttons: ['OK'], message, detail })
  },
  async error(message, detail) {
    await messageBox({ type: 'error', buttons: ['OK'], message, detail })
  },
}

async function messageBox(options: MessageBoxOptions): Promise<number> {
  const result = mainWindow
    ? await dialog.showMessageBox(mainWindow, options)
    : await dialog.showMessageBox(options)
  return result.response
}

async function chooseExportPath(defaultFileName: string): Promise<string | null> {
  const jsonl = defaultFileName.endsWith('.jsonl')
  const options: SaveDialogOptions = {
    title: jsonl ? 'Export results' : 'Export CSV',
    defaultPath: join(app.getPath('documents'), defaultFileName),
    filters: [
      jsonl ? { name: 'JSON Lines', extensions: ['jsonl'] } : { name: 'CSV', extensions: ['csv'] },
    ],
    properties: ['createDirectory', 'showOverwriteConfirmation'],
  }
  const result = mainWindow
    ? await dialog.showSaveDialog(mainWindow, options)
    : await dialog.showSaveDialog(options)
  return result.canceled || !result.filePath ? null : result.filePath
}

/**
 * `pacer` on the user's PATH: packaged, the launcher the app ships (resources/bin/pacer runs the
 * CLI on the app's own Electron as Node); in development, the clone's bin/pacer.cjs.
 */
function installCommand(): PathInstallResult {
  if (app.isPackaged && process.platform === 'win32') {
    // The Windows app ships no launcher yet: the package installed with npm is the way there.
    const message =
      'The Windows app cannot install the pacer command yet: see "Install as a tool" in the README (npm install -g).'
    return { outcome: 'refused', command: '', onPath: false, message }
  }
  const target = app.isPackaged
    ? join(process.resourcesPath, 'bin', 'pacer')
    : join(app.getAppPath(), 'bin', 'pacer.cjs')
  return installOnPath({
    platform: process.platform,
    home: homedir(),
    target,
    pathEnv: process.env['PATH'],
    ...(process.env['LOCALAPPDATA'] ? { localAppData: process.env['LOCALAPPDATA'] } : {}),
  })
}

async function start(): Promise<void> {
  hardenSession(session.defaultSession, {
    isAppUrl,
    policy: devServerUrl ? devContentSecurityPolicy(devServerUrl) : CONTENT_SECURITY_POLICY,
  })

  const nativeBinding = nativeBindingPath({
    isPackaged: app.isPackaged,
    appPath: app.getAppPath(),
    resourcesPath: process.resourcesPath,
  })
  if (!existsSync(nativeBinding)) {
    fatal(
      'Pacer cannot start',
      new Error(missingNativeBindingMessage(nativeBinding, app.isPackaged)),
    )
    return
  }

  const userData = app.getPath('userData')
  const secrets = createSecretStore({ safeStorage, filePath: join(userData, 'secrets.json') })
  // Team mode when $PACER_STORE or Settings names a Redis that answers; on its own otherwise, and
  // Settings says why (the window opens either way).
  const engine = await openDesktopEngine({
    dbPath: join(userData, 'pacer.db'),
    nativeBinding,
    secrets,
    // Spans of the batches this window runs: OTEL_EXPORTER_OTLP_* if set, else Settings.
    otlp: consoleOtlp(process.env),
  })
  // The Budgets banner's thresholds, told as desktop notifications too (once per cap and period).
  const stopNotices = watchBudgetNotifications(async () => engine.handlers['budgets:list']({}))
  installGracefulQuit(
    app,
    (opts) => {
      stopNotices()
      return engine.shutdown(opts)
    },
    { graceMs: SHUTDOWN_GRACE_MS },
  )

  const handlers = createDesktopHandlers(engine.handlers, {
    chooseExportPath,
    exportCsvToFile: (kind, filter, path, scope) =>
      exportCsvToFile(engine.exportCsv, kind, filter, path, engine.dbPath, scope),
    exportResultsToFile: (options, path) =>
      exportResultsToFile(engine.exportResults, options, path, engine.dbPath),
  })
  bindIpc(ipcMain, handlers, { isTrustedSender: createTrustedSenderCheck(isAppUrl) })

  const report = (err: unknown) => void dialogs.error('Something went wrong', String(err))
  Menu.setApplicationMenu(
    Menu.buildFromTemplate(
      buildMenuTemplate(
        {
          importBatch: () => void importBatchFromMenu(handlers, dialogs).catch(report),
          exportCsv: (kind) => void exportCsvFromMenu(handlers, kind, dialogs).catch(report),
          installCommand: () => void installCommandFromMenu(installCommand, dialogs).catch(report),
        },
        { platform: process.platform, isDev: !app.isPackaged, appName: app.name },
      ),
    ),
  )

  const createWindow = () => {
    const win = new BrowserWindow(createWindowOptions(preloadPath, { icon: windowIcon() }))
    mainWindow = win
    const stopEvents = forwardEvents(engine.subscribe, win.webContents)
    win.once('ready-to-show', () => win.show())
    win.on('closed', () => {
      stopEvents()
      if (mainWindow === win) mainWindow = null
    })
    const loaded = devServerUrl
      ? win.loadURL(devServerUrl)
      : win.loadFile(join(rendererDir, 'index.html'))
    loaded.catch((err: unknown) => console.error('pacer: the console failed to load:', err))
  }

  engine.start()
  createWindow()
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow()
  })
}

if (!app.requestSingleInstanceLock()) {
  // Another Pacer owns the database and the window: it is told (second-instance) and focuses.
  app.quit()
} else {
  // Every renderer sandboxed, whatever a future BrowserWindow forgets to set.
  app.enableSandbox()
  app.on('second-instance', focusMainWindow)
  app.on('web-contents-created', (_event, contents) =>
    guardNavigation(contents, { isAppUrl, shell }),
  )
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })
  app.whenReady().then(
    () => start().catch((err: unknown) => fatal('Pacer could not start', err)),
    (err: unknown) => fatal('Pacer could not start', err),
  )
}
