/**
 * The Electron shell wired end to end with only Electron mocked: the real engine on a real SQLite
 * file (loaded through the `nativeBinding` path, here pointing at node_modules' Node build, as the
 * Electron build would be in the app), real IPC handler map, real secret store, real CSV file.
 */
import { existsSync, symlinkSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Reply, SettingsView } from '../../../src/shared/contract'
import { COMMANDS } from '../../../src/shared/contract'

const h = vi.hoisted(() => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Emitter = (require('node:events') as { EventEmitter: new () => NodeJS.EventEmitter })
    .EventEmitter
  const state = {
    dir: '',
    lock: true,
    windows: [] as {
      options: Record<string, unknown>
      sent: [string, unknown][]
      emitter: NodeJS.EventEmitter
    }[],
    handlers: new Map<string, (event: unknown, input: unknown) => Promise<unknown>>(),
    menu: null as unknown,
    savePath: '',
    errorBoxes: [] as string[],
  }
  const app = Object.assign(new Emitter(), {
    isPackaged: false,
    name: 'Pacer',
    getPath: (name: string) => `${state.dir}/${name}`,
    getAppPath: () => `${state.dir}/app`,
    requestSingleInstanceLock: () => state.lock,
    enableSandbox: () => undefined,
    whenReady: () => Promise.resolve(),
    quit: () => {
      let prevented = false
      app.emit('before-quit', { preventDefault: () => (prevented = true) })
      if (!prevented) app.emit('test:quit')
    },
    exit: (code: number) => app.emit('test:exit', code),
  })
  class BrowserWindow {
    static all: BrowserWindow[] = []
    static getAllWindows = () => BrowserWindow.all
    emitter = new Emitter()
    sent: [string, unknown][] = []
    webContents = {
      send: (channel: string, payload: unknown) => this.sent.push([channel, payload]),
      isDestroyed: () => false,
    }
    constructor(public options: Record<string, unknown>) {
      BrowserWindow.all.push(this)
      state.windows.push(this)
    }
    once(event: string, l: () => void) {
      this.emitter.once(event, l)
    }
    on(event: string, l: () => void) {
      this.emitter.on(event, l)
    }
    loadFile = vi.fn(async () => undefined)
    loadURL = vi.fn(async () => undefined)
    show = vi.fn()
    focus = vi.fn()
    restore = vi.fn()
    isMinimized = () => false
  }
  const xor = (b: Buffer) => Buffer.from(b.map((x) => x ^ 0x5a))
  return {
    state,
    electron: {
      app,
      BrowserWindow,
      ipcMain: {
        handle: (channel: string, l: (event: unknown, input: unknown) => Promise<unknown>) =>
          state.handlers.set(channel, l),
        removeHandler: (channel: string) => state.handlers.delete(channel),
      },
      Menu: {
        buildFromTemplate: (t: unknown) => t,
        setApplicationMenu: (m: unknown) => (state.menu = m),
      },
      safeStorage: {
        isEncryptionAvailable: () => true,
        getSelectedStorageBackend: () => 'gnome_libsecret',
        encryptString: (s: string) => xor(Buffer.from(s)),
        decryptString: (b: Buffer) => xor(b).toString(),
      },
      session: {
        defaultSession: {
          webRequest: { onHeadersReceived: () => undefined },
          setPermissionRequestHandler: () => undefined,
          setPermissionCheckHandler: () => undefined,
        },
      },
      shell: { openExternal: async () => undefined },
      dialog: {
        showSaveDialog: async () => ({ canceled: false, filePath: state.savePath }),
        showOpenDialog: async () => ({ canceled: true, filePaths: [] }),
        showMessageBox: async () => ({ response: 0 }),
        showErrorBox: (title: string, message: string) =>
          state.errorBoxes.push(`${title}: ${message}`),
      },
    },
  }
})

vi.mock('electron', () => h.electron)

const KEY = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-QRST'
const rendererIndex = pathToFileURL(
  resolve(__dirname, '../../../src/main/renderer/index.html'),
).href
const trusted = { senderFrame: { url: rendererIndex, parent: null } }

async function invoke(channel: string, input: unknown, event: unknown = trusted) {
  const handler = h.state.handlers.get(channel)
  if (!handler) throw new Error(`no handler for ${channel}`)
  return (await handler(event, input)) as Reply<unknown>
}

describe('desktop shell (Electron mocked, real engine)', () => {
  beforeAll(async () => {
    h.state.dir = mkdtempSync(join(tmpdir(), 'pacer-shell-'))
    // The app loads better-sqlite3 from build/electron-native; here that is the Node build.
    const native = join(h.state.dir, 'app', 'build', 'electron-native')
    mkdirSync(native, { recursive: true })
    symlinkSync(
      resolve(__dirname, '../../../node_modules/better-sqlite3/build/Release/better_sqlite3.node'),
      join(native, 'better_sqlite3.node'),
    )
    h.state.savePath = join(h.state.dir, 'export.csv')
    delete process.env.ELECTRON_RENDERER_URL
    await import('../../../src/main/desktop/index')
    await vi.waitFor(() => expect(h.state.handlers.size).toBe(COMMANDS.length))
  })

  afterAll(async () => {
    const quit = new Promise((r) => h.electron.app.once('test:quit', r))
    h.electron.app.quit()
    await quit
    rmSync(h.state.dir, { recursive: true, force: true })
  })

  it('opens the database in userData/pacer.db through the nativeBinding path', () => {
    expect(h.state.errorBoxes).toEqual([])
    expect(existsSync(join(h.state.dir, 'userData', 'pacer.db'))).toBe(true)
  })

  it('creates one hidden, sandboxed, isolated window with the preload and shows it when ready', () => {
    expect(h.state.windows).toHaveLength(1)
    const win = h.state.windows[0]!
    const web = win.options.webPreferences as Record<string, unknown>
    expect(web).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false })
    expect(String(web.preload)).toMatch(/preload[\\/]index\.js$/)
    expect(win.options.show).toBe(false)
    const shown = (win as unknown as { show: ReturnType<typeof vi.fn> }).show
    expect(shown).not.toHaveBeenCalled()
    win.emitter.emit('ready-to-show')
    expect(shown).toHaveBeenCalled()
  })

  it('sets the native menu with Import batch and Export CSV', () => {
    const text = JSON.stringify(h.state.menu)
    expect(text).toContain('Import batch…')
    expect(text).toContain('Export CSV')
  })

  it('runs a command from the console against the real engine and forwards its events', async () => {
    const reply = await invoke('tasks:enqueue', {
      tasks: [{ type: 'summarize', payload: { doc: 1 } }],
      name: 'shell test',
    })
    expect(reply).toMatchObject({ ok: true, value: { enqueued: 1 } })
    const win = h.state.windows[0]!
    await vi.waitFor(() => expect(win.sent.some(([c]) => c === 'tasks:changed')).toBe(true), {
      timeout: 5000,
    })
  })

  it('refuses a command from a foreign page', async () => {
    const reply = await invoke(
      'batches:list',
      {},
      { senderFrame: { url: 'https://evil.example/', parent: null } },
    )
    expect(reply).toMatchObject({ ok: false, error: { code: 'forbidden' } })
  })

  it('refuses invalid input naming the field', async () => {
    const reply = await invoke('tasks:list', { limit: 0 })
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'limit' } })
  })

  it('stores an API key in the keyring file; the console sees hasKey and a hint, never the key', async () => {
    const reply = (await invoke('secrets:set', {
      provider: 'anthropic',
      apiKey: KEY,
    })) as Reply<SettingsView>
    expect(reply.ok).toBe(true)
    if (!reply.ok) return
    expect(reply.value.providers.anthropic.hasKey).toBe(true)
    expect(reply.value.providers.anthropic.keyHint).toContain('QRST')
    expect(reply.value.secretStorage).toEqual({ available: true, reason: null })
    expect(JSON.stringify(reply)).not.toContain(KEY)
    const settings = await invoke('settings:get', {})
    expect(JSON.stringify(settings)).not.toContain(KEY)
    const secretsFile = readFileSync(join(h.state.dir, 'userData', 'secrets.json'), 'utf8')
    expect(secretsFile).not.toContain(KEY)
    const db = readFileSync(join(h.state.dir, 'userData', 'pacer.db'))
    expect(db.includes(Buffer.from(KEY))).toBe(false)
  })

  it('exports the ledger through the save dialog into the chosen file', async () => {
    const reply = await invoke('ledger:export', { kind: 'summary' })
    expect(reply).toMatchObject({ ok: true, value: { path: h.state.savePath } })
    expect(readFileSync(h.state.savePath, 'utf8').length).toBeGreaterThan(0)
  })

  it('holds the quit until the engine has shut down', async () => {
    const app = h.electron.app
    let prevented = false
    app.emit('before-quit', { preventDefault: () => (prevented = true) })
    expect(prevented).toBe(true)
    await new Promise((r) => app.once('test:quit', r))
  })
})

describe('desktop shell: single instance', () => {
  it('a second instance quits at once and never opens the database', async () => {
    vi.resetModules()
    const dir = mkdtempSync(join(tmpdir(), 'pacer-shell2-'))
    const before = { dir: h.state.dir, windows: h.state.windows.length }
    h.state.dir = dir
    h.state.lock = false
    const quit = new Promise((r) => h.electron.app.once('test:quit', r))
    await import('../../../src/main/desktop/index')
    await quit
    // What the module scheduled at import (whenReady is a resolved promise here) runs first.
    await new Promise((r) => setImmediate(r))
    expect(h.state.windows).toHaveLength(before.windows)
    expect(existsSync(join(dir, 'userData', 'pacer.db'))).toBe(false)
    h.state.dir = before.dir
    rmSync(dir, { recursive: true, force: true })
  })
})
