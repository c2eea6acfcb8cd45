import type { CommandError } from '../../../shared/contract'
import type { ConnectionState } from '../event-stream'
import type { SliceCreator } from './types'

export type View = 'queue' | 'concurrency' | 'spend' | 'settings'

export interface Toast {
  id: number
  kind: 'error' | 'info'
  title: string
  message: string
  /** How many times the same toast fired while shown (a failing poll should not stack 50 toasts). */
  repeats: number
}

export interface UiSlice {
  view: View
  transport: 'ipc' | 'http' | null
  /** The HTTP event stream's state; what is on screen is stale unless `open`. */
  connection: ConnectionState
  toasts: Toast[]
  setView(view: View): void
  setTransport(transport: 'ipc' | 'http'): void
  setConnection(connection: ConnectionState): void
  /** For errors nobody is looking at a control for: background loads, event handling. */
  reportError(title: string, error: CommandError | string): void
  notify(title: string, message: string): void
  dismissToast(id: number): void
}

const ERROR_TOAST_MS = 12_000
const INFO_TOAST_MS = 5_000
let nextToastId = 1

export const createUiSlice: SliceCreator<UiSlice> = (set, get) => {
  const push = (kind: Toast['kind'], title: string, message: string): void => {
    const same = get().toasts.find(
      (t) => t.kind === kind && t.title === title && t.message === message,
    )
    if (same) {
      set({ toasts: get().toasts.map((t) => (t === same ? { ...t, repeats: t.repeats + 1 } : t)) })
      return
    }
    const id = nextToastId++
    // Keep the list short: the newest errors matter most, and older ones are still in the log.
    set({ toasts: [...get().toasts.slice(-4), { id, kind, title, message, repeats: 1 }] })
    setTimeout(() => get().dismissToast(id), kind === 'error' ? ERROR_TOAST_MS : INFO_TOAST_MS)
  }
  return {
    view: 'queue',
    transport: null,
    connection: 'connecting',
    toasts: [],
    setView: (view) => set({ view }),
    setTransport: (transport) => set({ transport }),
    setConnection: (connection) => set({ connection }),
    reportError: (title, error) => {
      const message =
        typeof error === 'string'
          ? error
          : error.field
            ? `${error.message} (${error.field})`
            : error.message
      console.error(`[pacer] ${title}: ${message}`)
      push('error', title, message)
    },
    notify: (title, message) => push('info', title, message),
    dismissToast: (id) => set({ toasts: get().toasts.filter((t) => t.id !== id) }),
  }
}
