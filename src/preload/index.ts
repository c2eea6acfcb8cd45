/**
 * The preload: exposes the typed contract client as `window.pacer`. Named functions only — the
 * page never touches ipcRenderer, so it can call exactly the contract's commands and hear exactly
 * its events. Sandboxed: only 'electron' may be required; electron-vite bundles the rest in.
 */
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron'
import { createPacerClient, type Invoke, type Subscribe } from '../shared/client'
import { errorReply } from '../shared/reply'

const invoke: Invoke = async (channel, input) => {
  try {
    return await ipcRenderer.invoke(channel, input)
  } catch (err) {
    // Main answers every command with a Reply; a rejection means the bridge itself failed
    // (no handler yet, main process gone). The console still gets data, never an exception.
    return errorReply('ipc', (err as Error)?.message ?? String(err))
  }
}

const subscribe: Subscribe = (event, listener) => {
  const forward = (_event: IpcRendererEvent, payload: unknown) => listener(payload)
  ipcRenderer.on(event, forward)
  return () => {
    ipcRenderer.removeListener(event, forward)
  }
}

contextBridge.exposeInMainWorld('pacer', {
  ...createPacerClient('ipc', invoke, subscribe),
  // Where a picked agent module lives: the engine loads it by path (a File's name is not enough).
  pathForFile: (file: Blob) => webUtils.getPathForFile(file as File),
})
