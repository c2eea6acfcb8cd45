// Where the announced share was refused outlives a fall of the announced rate (share-fall.ts),
// on explicit clocks (SendPace and ShareCycle are pure).
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { ShareCycle } from '../../../../src/main/engine/pacing/share-cycle'
import { RATE, rateAt, send } from './share-pace-helpers'

/** A lane of requests, a call one request: at 0.8 a ms two calls are 2.5 ms, the window 1 s. */
const LANE = { meanCost: 1, tokens: false }

/** A pace one call at a time, refused twice at its whole share: a repeated cycle. */
function twiceRefused(): { pace: SendPace; at: number } {
  const pace = new SendPace()
  pace.announce('requests', RATE / 60_000, 0)
  pace.refusedUnexplained(1, 2) // narrows to one call at a time
  pace.refusedUnexplained(10_000, 10_001) // the first cut, from the whole share
  send(pace, 10_001, 30_000) // back to the whole share
  pace.refusedUnexplained(30_000, 30_001) // refused there again: cut to ~0.89
  return { pace, at: 30_001 }
}

describe('SendPace: the share refused, across a fall of the announced rate', () => {
  it('a refusal at the same share after a fall still cuts half as deep', () => {
    const { pace, at } = twiceRefused()
    send(pace, at, at + 20_000) // regrown to the whole share
    const fall = at + 20_000
    pace.announce('requests', (RATE * 0.8) / 60_000, fall) // a fifth less announced
    send(pace, fall, fall + 20_000)
    const before = rateAt(pace, fall + 20_000)
    expect(before).toBeCloseTo(RATE * 0.8 * 0.98, 0)
    pace.refusedUnexplained(fall + 20_000, fall + 20_001)
    // The refusals' memory kept: a repeat (to 0.89), not a first refusal (to 0.8).
    expect(rateAt(pace, fall + 20_001) / before).toBeCloseTo(Math.sqrt(0.8), 3)
  })

  it('a rise of the announced rate still forgets it: a first refusal cuts to 0.8', () => {
    const { pace, at } = twiceRefused()
    send(pace, at, at + 20_000)
    const rise = at + 20_000
    pace.announce('requests', (RATE * 1.25) / 60_000, rise)
    send(pace, rise, rise + 20_000)
    const before = rateAt(pace, rise + 20_000)
    pace.refusedUnexplained(rise + 20_000, rise + 20_001)
    expect(rateAt(pace, rise + 20_001) / before).toBeCloseTo(0.8, 3)
  })
})

describe('ShareCycle: what a fall keeps', () => {
  it('keeps the slow regrowth under the share refused twice when the rate falls', () => {
    const cycle = new ShareCycle()
    cycle.cut(0.98, 0.8, 0, 0)
    cycle.cut(0.97, 0.8, 10_000, 10_000)
    expect(cycle.ceiling).toBe(0.97)
    expect(cycle.moved(1, 0.8, 30_000, LANE)).toBe(true) // the share regrows from now, still slowly
    expect(cycle.ceiling).toBe(0.97)
    expect(cycle.cut(0.95, 0.8, 40_000, 40_000)).toBeCloseTo(Math.sqrt(0.8), 9)
  })

  it('a cut just before the fall was read was the fall`s: the memory before it comes back', () => {
    const cycle = new ShareCycle()
    cycle.cut(0.98, 0.8, 0, 0)
    cycle.cut(0.97, 0.8, 10_000, 10_000)
    // Sent at the old rate, refused at a share of it the headers had not yet said was too high.
    cycle.cut(0.6, 0.8, 20_000, 20_000)
    expect(cycle.ceiling).toBe(0)
    // The fall read 600 ms later, within the window.
    cycle.moved(1, 0.8, 20_600, LANE)
    expect(cycle.ceiling).toBe(0.97)
    // Read 2 s later, the refusal was the share's: kept as it is.
    const late = new ShareCycle()
    late.cut(0.98, 0.8, 0, 0)
    late.cut(0.97, 0.8, 10_000, 10_000)
    late.cut(0.6, 0.8, 20_000, 20_000)
    late.moved(1, 0.8, 22_000, LANE)
    expect(late.ceiling).toBe(0)
  })

  it('a fall of a rate of tokens forgets it, as any move did (a refusal there may be a size)', () => {
    const cycle = new ShareCycle()
    cycle.cut(0.98, 0.8, 0, 0)
    cycle.cut(0.97, 0.8, 10_000, 10_000)
    expect(cycle.moved(1, 0.8, 30_000, { meanCost: 1000, tokens: true })).toBe(true)
    expect(cycle.ceiling).toBe(0)
    expect(cycle.cut(0.95, 0.8, 40_000, 40_000)).toBe(0.8)
  })

  it('a call out when the rate fell is refused by the fall: a first refusal`s cut and regrowth', () => {
    const cycle = new ShareCycle()
    cycle.cut(0.98, 0.8, 0, 0)
    cycle.cut(0.97, 0.8, 10_000, 10_000)
    cycle.moved(1, 0.8, 30_000, LANE)
    // Sent at 29.9 s, before the fall was read: the full cut, regrown at the full pace...
    expect(cycle.cut(1.2, 0.8, 29_900, 30_050)).toBe(0.8)
    expect(cycle.ceiling).toBe(0)
    expect(cycle.regrown(0.8, 0.1)).toBeCloseTo(0.8 * Math.exp(0.1), 9)
    // ... and 0.97, not 1.2, still the share the last refusal came at: 0.96 repeats it.
    expect(cycle.cut(0.96, 0.8, 40_000, 40_000)).toBeCloseTo(Math.sqrt(0.8), 9)
  })
})
