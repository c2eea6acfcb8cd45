/**
 * The contract's error reply, built in one place for every side that answers one: main's
 * transports (unknown command, forbidden sender, bad request) and the console's clients (network
 * or bridge failures), so the shape `{ ok: false, error: { code, message, field? } }` cannot drift.
 */
import type { CommandError, Reply } from './contract'

/** `{ ok: false, error }`; `field` only when given (absent, not undefined, on the wire). */
export function errorReply(code: string, message: string, field?: string): Reply<never> {
  const error: CommandError = { code, message }
  if (field !== undefined) error.field = field
  return { ok: false, error }
}
