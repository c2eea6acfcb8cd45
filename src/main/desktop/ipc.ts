/**
 * The contract over Electron IPC: one `ipcMain.handle` per command, one `webContents.send` per
 * event. `ipcMain` and `webContents` come in as parameters (Bruno's IpcMainLike), so this is tested
 * without Electron. Validation, unknown channels and error mapping are shared with the HTTP
 * transport (transport/commands.ts); what IPC adds is the sender check.
 */
import { COMMANDS, EVENTS, type CommandHandlers, type Reply } from '../../shared/contract'
import { errorReply } from '../../shared/reply'
import { dispatchCommand, type EventSubscribe } from '../transport/commands'

/** The frame that sent an invoke (Electron's WebFrameMain, as far as this module cares). */
export interface SenderFrameLike {
  readonly url: string
  /** null for a top-level frame. */
  readonly parent: unknown
}

export interface IpcInvokeEventLike {
  /** null once the frame navigated away or was destroyed. */
  readonly senderFrame: SenderFrameLike | null
}

export interface IpcMainLike {
  handle(
    channel: string,
    listener: (event: IpcInvokeEventLike, ...args: unknown[]) => unknown,
  ): void
  removeHandler(channel: string): void
}

export interface BindIpcOptions {
  /** False for anything but the console's own top-level page. */
  isTrustedSender(event: IpcInvokeEventLike): boolean
}

/**
 * Registers a handler for every command in the contract. Each answers a `Reply`: forbidden for a
 * foreign sender, invalid_input naming the field, or the handler's value / error as data.
 * Returns a function that removes the handlers again.
 */
export function bindIpc(
  ipcMain: IpcMainLike,
  handlers: CommandHandlers,
  options: BindIpcOptions,
): () => void {
  for (const channel of COMMANDS) {
    ipcMain.handle(channel, async (event, input): Promise<Reply<unknown>> => {
      if (!options.isTrustedSender(event)) {
        return errorReply('forbidden', 'this page may not run Pacer commands')
      }
      return dispatchCommand(handlers, channel, input)
    })
  }
  return () => {
    for (const channel of COMMANDS) ipcMain.removeHandler(channel)
  }
}

/**
 * Trusts a sender only if it is a top-level frame showing the console. A subframe (there are
 * none, but CSP is the only thing keeping one out) or a page the window navigated to is refused.
 */
export function createTrustedSenderCheck(
  isAppUrl: (url: string) => boolean,
): (event: IpcInvokeEventLike) => boolean {
  return (event) => {
    const frame = event.senderFrame
    if (!frame) return false
    if (frame.parent !== null && frame.parent !== undefined) return false
    return isAppUrl(frame.url)
  }
}

/** The slice of a WebContents that event forwarding needs. */
export interface EventTargetContentsLike {
  send(channel: string, payload: unknown): void
  isDestroyed(): boolean
}

/**
 * Forwards every engine event to one window. Returns an unsubscribe; call it when the window
 * closes (events to a destroyed WebContents are dropped meanwhile, not thrown).
 */
export function forwardEvents(
  subscribe: EventSubscribe,
  contents: EventTargetContentsLike,
): () => void {
  const unsubscribes = EVENTS.map((name) =>
    subscribe(name, (payload) => {
      if (contents.isDestroyed()) return
      try {
        contents.send(name, payload)
      } catch (err) {
        // A payload that cannot be structured-cloned is a bug; it must not kill the engine's emit.
        console.error(`pacer: could not forward ${name}:`, err)
      }
    }),
  )
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe()
  }
}
