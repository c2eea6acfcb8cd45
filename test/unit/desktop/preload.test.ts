// The preload with Electron mocked: it exposes the contract's named functions, and where a picked
// file lives (an agent module) through webUtils, never ipcRenderer itself.
import { describe, expect, it, vi } from 'vitest'

const exposed: Record<string, unknown> = {}
vi.mock('electron', () => ({
  contextBridge: {
    exposeInMainWorld: (name: string, api: unknown) => {
      exposed[name] = api
    },
  },
  ipcRenderer: { invoke: vi.fn(), on: vi.fn(), removeListener: vi.fn() },
  webUtils: { getPathForFile: (file: { name: string }) => `/picked/${file.name}` },
}))

describe('preload', () => {
  it('exposes the client and pathForFile, which asks webUtils for the file path', async () => {
    await import('../../../src/preload/index')
    const api = exposed['pacer'] as Record<string, unknown>
    expect(api.transport).toBe('ipc')
    expect(typeof api.importBatch).toBe('function')
    expect(api).not.toHaveProperty('ipcRenderer')
    const pathForFile = api.pathForFile as (file: { name: string }) => string
    expect(pathForFile({ name: 'agent.mjs' })).toBe('/picked/agent.mjs')
  })
})
