// The floor's spacing by the calls' sizes (floor-sizes.ts): pure, and through a partition's pacing
// on a fake clock (every method takes `now`).
import { describe, expect, it } from 'vitest'
import { FloorSizes } from '../../../../src/main/engine/pacing/floor-sizes'
import {
  PartitionPacing,
  checkPacingOptions,
} from '../../../../src/main/engine/pacing/partition-pacing'

const T0 = 1_000_000
const SMALL = { inputTokens: 200, outputTokens: 100 }
const LARGE = { inputTokens: 3800, outputTokens: 100 }

/** 64 calls admitted whose sizes run evenly from 300 to 3,450 tokens. */
function admitted(sizes: FloorSizes): void {
  for (let i = 0; i < 64; i++) sizes.admitted({ inputTokens: 200 + 50 * i, outputTokens: 100 })
}

/** A refusal of a call of `input` tokens in (its output estimate 100). */
const call = (input: number) => ({ estimatedInput: input, estimatedOutput: 100 })

describe('FloorSizes', () => {
  it('says tokens bind once eight refusals took the large calls, and weighs calls by size', () => {
    const sizes = new FloorSizes()
    admitted(sizes)
    for (let k = 0; k < 7; k++) sizes.refused(call(3000 + 10 * k))
    expect(sizes.tokens).toBe(false)
    expect(sizes.weight(LARGE)).toBe(1)
    sizes.refused(call(3100))
    expect(sizes.tokens).toBe(true)
    // The mean size is 1,875: a call of 3,900 waits about twice the spacing, one of 300 a sixth.
    expect(sizes.weight(LARGE)).toBeCloseTo(3900 / 1875, 6)
    expect(sizes.weight(SMALL)).toBeCloseTo(300 / 1875, 6)
    expect(sizes.weight(undefined)).toBe(1)
  })

  it('not when refusals take calls of every size, as a bucket in requests does', () => {
    const sizes = new FloorSizes()
    admitted(sizes)
    for (let k = 0; k < 24; k++) sizes.refused(call(k % 2 === 0 ? 400 + 10 * k : 3000 + 10 * k))
    expect(sizes.tokens).toBe(false)
  })

  it('counts a call refused again once', () => {
    const sizes = new FloorSizes()
    admitted(sizes)
    for (let k = 0; k < 7; k++) sizes.refused(call(3000 + 10 * k))
    for (let k = 0; k < 5; k++) sizes.refused(call(3000))
    expect(sizes.tokens).toBe(false)
  })
})

describe('PartitionPacing at the floor with calls of many sizes', () => {
  it('spaces a large call longer than a small one once refusals took the large ones', () => {
    const pacing = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }))
    let t = T0
    // One call a second served in 500 ms, then a refusal at the floor: the floor's pace starts.
    for (let i = 0; i < 16; i++) {
      const size = { inputTokens: 200 + 200 * i, outputTokens: 100 }
      const r = pacing.admit(t, size)
      pacing.settle(t + 500, r, 'ok')
      t += 1000
    }
    expect(pacing.floorPaced(t, t - 500)).toBe(true)
    expect(pacing.floorPacing).toBe(true)
    pacing.admit(t, SMALL)
    const before = [pacing.delayMs(t, SMALL), pacing.delayMs(t, LARGE)]
    expect(before[0]).toBeGreaterThan(0)
    expect(before[1]).toBe(before[0])
    // Each large call goes when the pace allows and is refused (the scheduler cuts the floor's
    // pace with it); a small one between is served.
    for (let k = 0; k < 8; k++) {
      const large = { inputTokens: 3600 + 10 * k, outputTokens: 100 }
      t += pacing.delayMs(t, large)
      const r = pacing.admit(t, large)
      pacing.settle(t + 20, r, 'throttled')
      pacing.floorPaced(t + 20, t)
      t += pacing.delayMs(t, SMALL)
      pacing.settle(t + 500, pacing.admit(t, SMALL), 'ok')
    }
    expect(pacing.floorPacing).toBe(true)
    const small = pacing.delayMs(t + 1, SMALL)
    const big = pacing.delayMs(t + 1, LARGE)
    expect(big).toBeGreaterThan(2 * small)
  })
})
