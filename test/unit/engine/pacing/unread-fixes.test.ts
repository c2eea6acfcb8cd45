import { describe, expect, it } from 'vitest'
import { BUDGET_DIMENSIONS, costOf } from '../../../../src/main/engine/pacing/budget-reading'
import type { BudgetDimension } from '../../../../src/main/engine/pacing/budget-reading'
import { RateBudget } from '../../../../src/main/engine/pacing/rate-budget'
import { UnreadFixes } from '../../../../src/main/engine/pacing/unread-fixes'
import { seededRandom } from '../../../helpers/random'

type Fix = Record<BudgetDimension, number>
const zero = (): Fix => costOf({ inputTokens: 0, outputTokens: 0 }, 0)

/** The rule as it was, one entry a call until a reading covers it: what a reading must count. */
class KeepEveryFix {
  readonly counted = zero()
  #readSeq = -1
  readonly #pending: { seq: number; fix: Fix }[] = []
  add(seq: number, fix: Fix): void {
    if (seq <= this.#readSeq) this.#count(fix)
    else this.#pending.push({ seq, fix })
  }
  read(seq: number): void {
    this.#readSeq = seq
    for (const p of this.#pending.splice(0)) {
      if (p.seq > seq) this.#pending.push(p)
      else this.#count(p.fix)
    }
  }
  #count(fix: Fix): void {
    for (const dim of BUDGET_DIMENSIONS) this.counted[dim] += fix[dim]
  }
}

/**
 * Calls sent and answered out of order (up to `inFlight` out, answered in a random order), one
 * in `readEvery` answers carrying a reading (0: none): `each` sees every answer's seq, and how
 * many calls were answered after the oldest call still out was sent (`ahead`).
 */
function run(
  seed: number,
  calls: number,
  inFlight: number,
  readEvery: number,
  each: (seq: number, fix: Fix, read: boolean, ahead: number) => void,
): void {
  const random = seededRandom(seed)
  const out: number[] = []
  let next = 0
  let answered = 0
  while (next < calls || out.length > 0) {
    while (next < calls && out.length < inFlight && (out.length === 0 || random() < 0.6)) {
      out.push(next++)
    }
    const seq = out.splice(Math.floor(random() * out.length), 1)[0] as number
    const fix = zero()
    fix.tokens = Math.floor(random() * 200) - 100
    fix['input-tokens'] = seq % 7
    answered++
    // Every call before the oldest one out is answered: the rest of the answers came after it.
    const ahead = answered - Math.min(next, ...out)
    each(seq, fix, readEvery > 0 && random() < 1 / readEvery, ahead)
  }
}

describe('UnreadFixes', () => {
  it('counts at each reading the fixes the rule of one entry a call counted', () => {
    for (const seed of [1, 2, 3]) {
      for (const readEvery of [1, 5, 50]) {
        const counted = zero()
        const fixes = new UnreadFixes(counted)
        const reference = new KeepEveryFix()
        let readSeq = -1
        let reads = 0
        run(seed, 5_000, 40, readEvery, (seq, fix, read) => {
          fixes.add(seq, fix)
          reference.add(seq, fix)
          // A reading from an answer older than one read already is ignored (rate-budget.ts).
          if (read && seq > readSeq) {
            readSeq = seq
            fixes.read(seq)
            reference.read(seq)
            expect(counted).toEqual(reference.counted)
            reads++
          }
          fixes.answered(seq)
        })
        expect(reads).toBeGreaterThan(readEvery === 50 ? 20 : 200)
      }
    }
  })

  it('keeps no entry a call where no reading ever comes', () => {
    const counted = zero()
    const fixes = new UnreadFixes(counted)
    let most = 0
    let mostAhead = 0
    let sum = 0
    run(4, 50_000, 64, 0, (seq, fix, _read, ahead) => {
      fixes.add(seq, fix)
      sum += fix.tokens
      fixes.answered(seq)
      most = Math.max(most, fixes.size)
      mostAhead = Math.max(mostAhead, ahead)
    })
    // Only the fixes of calls answered while an older one was out are kept (a sweep when their
    // count doubles); one entry a call kept 50,000.
    expect(most).toBeLessThanOrEqual(Math.max(64, 2 * mostAhead))
    expect(most).toBeLessThan(5_000)
    // Nothing is lost: once every call is answered, every fix is counted or kept for the next reading.
    fixes.read(50_000)
    expect(counted.tokens).toBe(sum)
  })
})

describe('RateBudget: a budget nobody announces', () => {
  it('keeps no fix per call when answers carry usage but no budget headers', () => {
    const budget = new RateBudget()
    const estimate = { inputTokens: 100, outputTokens: 50 }
    const usage = { inputTokens: 90, outputTokens: 20 }
    const random = seededRandom(5)
    const out: ReturnType<RateBudget['reserve']>[] = []
    let most = 0
    for (let i = 0; i < 20_000; i++) {
      out.push(budget.reserve(i, estimate))
      if (out.length < 16) continue
      const r = out.splice(Math.floor(random() * out.length), 1)[0] as (typeof out)[number]
      budget.settle(i, r, { refused: false, usage })
      most = Math.max(most, budget.unreadFixes)
    }
    expect(budget.known).toBe(false)
    // One entry a call kept them all: 20,000 less the 15 out.
    expect(most).toBeLessThan(500)
  })
})
