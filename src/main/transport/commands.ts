/**
 * Command dispatch for both bindings (Electron IPC in desktop/, HTTP in server/): look up the
 * command, validate its input with the shared schema, run the handler, and turn whatever it throws
 * into the contract's error data. Plain Node: desktop/ imports it, it never imports Electron.
 */
import { z } from 'zod'
import {
  isCommandName,
  parseCommand,
  validationError,
  type CommandError,
  type CommandHandlers,
  type CommandInput,
  type CommandName,
  type CommandResult,
  type EventName,
  type Reply,
} from '../../shared/contract'
import { errorReply } from '../../shared/reply'

/** The engine's event subscription, as both transports consume it. Returns an unsubscribe. */
export type EventSubscribe = (event: EventName, listener: (payload: unknown) => void) => () => void

// A code is an identifier the console can switch on (`invalid_input`, `SQLITE_BUSY`); anything
// else (numbers, sentences, objects) is not trusted to be one.
const CODE_PATTERN = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/
const MAX_MESSAGE = 2000

/**
 * Turns anything thrown into `{ code, message, field? }`. Keeps `code` and `field` when present;
 * never includes a stack (a renderer or a browser tab has no business with main's file paths).
 */
export function toCommandError(err: unknown): CommandError {
  if (err instanceof z.ZodError) return validationError(err)
  if (typeof err === 'object' && err !== null) {
    const e = err as { code?: unknown; message?: unknown; field?: unknown }
    const code = typeof e.code === 'string' && CODE_PATTERN.test(e.code) ? e.code : 'internal'
    const message =
      typeof e.message === 'string' && e.message.length > 0 ? e.message : 'unexpected error'
    const out: CommandError = { code, message: message.slice(0, MAX_MESSAGE) }
    if (typeof e.field === 'string' && e.field.length > 0) out.field = e.field.slice(0, 500)
    return out
  }
  return { code: 'internal', message: String(err).slice(0, MAX_MESSAGE) }
}

/** The reply to a channel the contract does not have (its name capped: it came from outside). */
export function unknownCommand(channel: string): Reply<never> {
  return errorReply('unknown_command', `unknown command "${channel.slice(0, 100)}"`)
}

/** Logs what the console cannot act on (no code: a bug, not a domain error), with its stack. */
function logInternal(channel: string, err: unknown): void {
  console.error(`pacer: command ${channel} failed:`, err)
}

/**
 * Runs one command for a transport: unknown channel, invalid input and thrown errors all come back
 * as `{ ok: false }` data, so neither transport ever rejects.
 */
export async function dispatchCommand(
  handlers: CommandHandlers,
  channel: string,
  input: unknown,
  onInternalError: (channel: string, err: unknown) => void = logInternal,
): Promise<Reply<unknown>> {
  if (!isCommandName(channel)) return unknownCommand(channel)
  const parsed = parseCommand(channel, input)
  if (!parsed.ok) return parsed
  try {
    // The map is indexed by a union here; the parse above guarantees the input matches `channel`.
    const handler = handlers[channel] as (input: unknown) => unknown
    const value = await handler(parsed.value)
    return { ok: true, value }
  } catch (err) {
    const error = toCommandError(err)
    if (error.code === 'internal') onInternalError(channel, err)
    return { ok: false, error }
  }
}

/** `dispatchCommand` for callers inside main that know the command statically (menu actions). */
export function runCommand<C extends CommandName>(
  handlers: CommandHandlers,
  channel: C,
  input: CommandInput<C>,
): Promise<Reply<CommandResult<C>>> {
  return dispatchCommand(handlers, channel, input) as Promise<Reply<CommandResult<C>>>
}
