import { EventEmitter } from 'node:events'
import { afterEach, describe, expect, it, vi } from 'vitest'

vi.mock('electron', () => ({}))

import { installGracefulQuit } from '../../../src/main/desktop/lifecycle'
import {
  missingNativeBindingMessage,
  nativeBindingPath,
} from '../../../src/main/desktop/native-binding'
import { join } from 'node:path'

class FakeApp extends EventEmitter {
  quit = vi.fn(() => {
    // Electron's app.quit() emits before-quit again; a handler that prevents it every time
    // would keep the app open forever.
    const prevented = this.beforeQuit()
    if (!prevented) this.exited = true
  })
  exited = false
  beforeQuit(): boolean {
    let prevented = false
    this.emit('before-quit', { preventDefault: () => (prevented = true) })
    return prevented
  }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('installGracefulQuit', () => {
  it('holds the first quit, drains the engine once, then quits for real', async () => {
    const app = new FakeApp()
    let release!: () => void
    const shutdown = vi.fn(() => new Promise<void>((r) => (release = r)))
    installGracefulQuit(app, shutdown, { graceMs: 5000 })

    expect(app.beforeQuit()).toBe(true)
    expect(shutdown).toHaveBeenCalledWith({ graceMs: 5000 })
    // A second Cmd+Q while draining is held too, and does not start a second shutdown.
    expect(app.beforeQuit()).toBe(true)
    expect(shutdown).toHaveBeenCalledTimes(1)
    expect(app.quit).not.toHaveBeenCalled()

    release()
    await vi.waitFor(() => expect(app.exited).toBe(true))
    expect(app.quit).toHaveBeenCalledTimes(1)
  })

  it('quits even when the shutdown fails', async () => {
    const app = new FakeApp()
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    installGracefulQuit(app, async () => Promise.reject(new Error('disk full')), { graceMs: 10 })
    app.beforeQuit()
    await vi.waitFor(() => expect(app.exited).toBe(true))
    log.mockRestore()
  })

  it('quits after grace + hard limit when the shutdown hangs', () => {
    vi.useFakeTimers()
    const app = new FakeApp()
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    installGracefulQuit(app, () => new Promise<void>(() => undefined), {
      graceMs: 1000,
      hardLimitMs: 500,
    })
    app.beforeQuit()
    vi.advanceTimersByTime(1499)
    expect(app.exited).toBe(false)
    vi.advanceTimersByTime(1)
    expect(app.exited).toBe(true)
    log.mockRestore()
  })
})

describe('nativeBindingPath', () => {
  it('uses build/electron-native in development, apart from node_modules', () => {
    const path = nativeBindingPath({
      isPackaged: false,
      appPath: '/src/pacer',
      resourcesPath: '/x',
    })
    expect(path).toBe(join('/src/pacer', 'build', 'electron-native', 'better_sqlite3.node'))
    expect(path).not.toContain('node_modules')
  })

  it('uses the resources folder (outside the asar) when packaged', () => {
    const path = nativeBindingPath({
      isPackaged: true,
      appPath: '/opt/Pacer/resources/app.asar',
      resourcesPath: '/opt/Pacer/resources',
    })
    expect(path).toBe(join('/opt/Pacer/resources', 'electron-native', 'better_sqlite3.node'))
    expect(path).not.toContain('.asar')
  })

  it('tells a developer how to build it and a user to reinstall', () => {
    expect(missingNativeBindingMessage('/p', false)).toContain('npm run build:electron-native')
    expect(missingNativeBindingMessage('/p', true)).toContain('Reinstall')
  })
})
