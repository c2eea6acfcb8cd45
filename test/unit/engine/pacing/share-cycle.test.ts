// The announced share's cycle (share-cycle.ts): a refusal at the share the last one came at cuts
// half as deep and regrows slower up to it, on explicit clocks (SendPace is pure).
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { ShareCycle } from '../../../../src/main/engine/pacing/share-cycle'
import { RATE, rateAt, send } from './share-pace-helpers'

/** A pace one call at a time, refused at its whole share, regrown, and refused there again. */
function twiceRefused(): { pace: SendPace; at: number } {
  const pace = new SendPace()
  pace.announce('requests', RATE / 60_000, 0)
  pace.refusedUnexplained(1, 2) // narrows to one call at a time
  pace.refusedUnexplained(10_000, 10_001) // the first cut, from the whole share
  send(pace, 10_001, 30_000) // 20 s: x1.64, back to the whole share
  expect(rateAt(pace, 30_000)).toBeCloseTo(RATE * 0.98, 3)
  pace.refusedUnexplained(30_000, 30_001)
  return { pace, at: 30_001 }
}

describe('ShareCycle', () => {
  it('cuts as usual at a first refusal or one at another share, half as deep at the same share', () => {
    const cycle = new ShareCycle()
    expect(cycle.cut(1, 0.8)).toBe(0.8)
    expect(cycle.ceiling).toBe(0)
    expect(cycle.cut(0.97, 0.8)).toBeCloseTo(Math.sqrt(0.8), 9)
    expect(cycle.ceiling).toBe(0.97)
    expect(cycle.cut(0.7, 0.8)).toBe(0.8)
    expect(cycle.ceiling).toBe(0)
    // A move of the announced rate by more than a tenth forgets where refusals came.
    expect(cycle.moved(1, 1.05)).toBe(false)
    expect(cycle.cut(0.7, 0.8)).toBeCloseTo(Math.sqrt(0.8), 9)
    expect(cycle.moved(1, 1.2)).toBe(true)
    expect(cycle.cut(0.7, 0.8)).toBe(0.8)
  })

  it('regrows at a quarter of the pace up to the ceiling, at the full pace past it', () => {
    const cycle = new ShareCycle()
    cycle.cut(1, 0.8)
    cycle.cut(1, 0.8)
    const from = Math.sqrt(0.8)
    const span = Math.log(1 / from) / 0.25
    expect(cycle.regrown(from, span / 2)).toBeCloseTo(Math.sqrt(from), 9)
    expect(cycle.regrown(from, span)).toBeCloseTo(1, 9)
    expect(cycle.regrown(from, span + 0.1)).toBeCloseTo(Math.exp(0.1), 9)
  })
})

describe('SendPace: a refusal at the share the last one came at', () => {
  it('cuts to ~0.89 and takes twice a cut`s regrowth time to come back to it', () => {
    const { pace, at } = twiceRefused()
    const cut = rateAt(pace, at)
    expect(cut / (RATE * 0.98)).toBeCloseTo(Math.sqrt(0.8), 3)
    // At the usual pace (x1.025 a second) the cut regrows in 4.5 s; at a quarter of it, 18 s.
    send(pace, at, at + 9_000)
    const halfway = rateAt(pace, at + 9_000)
    expect(halfway / cut).toBeCloseTo(0.8 ** -0.25, 2)
    send(pace, at + 9_000, at + 18_100)
    expect(rateAt(pace, at + 18_100)).toBeCloseTo(RATE * 0.98, 0)
  })

  it('cuts to 0.8 as usual once the announced rate has moved by more than a tenth', () => {
    const { pace, at } = twiceRefused()
    send(pace, at, at + 20_000)
    pace.announce('requests', (RATE * 1.2) / 60_000, at + 20_000)
    send(pace, at + 20_000, at + 40_000)
    const before = rateAt(pace, at + 40_000)
    pace.refusedUnexplained(at + 40_000, at + 40_001)
    expect(rateAt(pace, at + 40_001) / before).toBeCloseTo(0.8, 3)
  })
})
