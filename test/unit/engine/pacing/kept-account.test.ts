// What the shared store is told a finished call cost (PartitionPacing.account, for several
// workers on one store): where the readings show that the token budget keeps what a call
// reserved (OpenAI counts `max_tokens` against the minute and keeps it), the call cost its
// reservation; where it counts what was used, what was used. Pure: every method takes `now`.
import { describe, expect, it } from 'vitest'
import {
  PartitionPacing,
  checkPacingOptions,
} from '../../../../src/main/engine/pacing/partition-pacing'
import type { BudgetTicket } from '../../../../src/main/engine/pacing/shared-budget'

const T0 = 1_000_000
const LIMIT = 1_000_000 // tokens a minute
const MAX_TOKENS = 600

/**
 * Calls of 1,000 input tokens answered at once, a second apart give or take half, into a bucket
 * in OpenAI's headers that counts what each reserved (`kept`) or what each used: the partition's
 * pacing after 30 of them.
 */
function afterCalls(kept: boolean): PartitionPacing {
  const pacing = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }))
  let t = T0
  let remaining = LIMIT / 2
  let seed = 3
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
    return seed / 2 ** 32
  }
  for (let i = 0; i < 30; i++) {
    const gap = 1000 * (0.5 + random())
    t += gap
    remaining = Math.min(LIMIT, remaining + (LIMIT / 60_000) * gap)
    const output = Math.round(50 + 500 * random())
    remaining -= 1000 + (kept ? MAX_TOKENS : output)
    const reservation = pacing.admit(t, { inputTokens: 1000, outputTokens: MAX_TOKENS })
    pacing.settle(t, reservation, 'ok', {
      headers: {
        'x-ratelimit-limit-tokens': String(LIMIT),
        'x-ratelimit-remaining-tokens': String(Math.floor(remaining)),
        'x-ratelimit-reset-tokens': '30s',
      },
      usage: { inputTokens: 1000, outputTokens: output },
    })
  }
  return pacing
}

/** What the store is told to correct for a call that used 100 of its 600, with no reading. */
function correction(pacing: PartitionPacing): number | undefined {
  const cost = { requests: 1, tokens: 1600, 'input-tokens': 1000, 'output-tokens': MAX_TOKENS }
  const charged = { ticket: {} as BudgetTicket, cost }
  const usage = { inputTokens: 1000, outputTokens: 100 }
  return pacing.account(T0 + 60_000, T0 + 59_000, charged, false, undefined, usage).correction
    ?.tokens
}

describe('PartitionPacing.account: what the shared store is told a call cost', () => {
  it('a bucket that keeps what was reserved: the reservation, nothing back', () => {
    expect(correction(afterCalls(true))).toBeUndefined()
  })

  it('a bucket that counts what was used: the unused 500 back', () => {
    expect(correction(afterCalls(false))).toBe(-500)
  })
})
