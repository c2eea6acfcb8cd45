// `pacer run`'s last word when the database could not take writes to the end.
import { formatUsd } from '../../shared/format'
import type { Engine } from '../engine'
import { EXIT } from './exit-codes'
import { say } from './terminal-text'

/**
 * With the disk still full at the end: one line with the paid answers lost (count and cost) and
 * exit code 3. Null when everything was written.
 */
export function reportHeldAnswers(engine: Engine): number | null {
  const held = engine.heldAnswers()
  if (!held.blocked && held.count === 0) return null
  const cost =
    formatUsd(held.costMicros) + (held.unpriced > 0 ? ` + ${held.unpriced} unpriced` : '')
  say.err(
    `pacer: lost ${held.count} paid answer(s) (${cost}): the database ${engine.dbPath} still ` +
      'cannot take writes; free some space and run the same command again (their tasks run again)\n',
  )
  return EXIT.database
}
