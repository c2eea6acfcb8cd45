// The shared lane at the partition's freshest reading of the announced rate (lane-fresh-rate.ts):
// a worker's share of the rate it read, scaled to the rate the store last read. Two processes on
// one SQLite file: shared-lane.test.ts.
import { describe, expect, it } from 'vitest'
import { freshLanePaces } from '../../../../src/main/engine/pacing/lane-fresh-rate'

const PER_MIN = (n: number) => n / 60_000

describe('the lane follows the freshest announced rate', () => {
  it("keeps the asker's share of the rate and scales it to the shared reading", () => {
    // The asker read 60 a minute and paces 0.8 of it; the store read 600 since.
    const paces = { requests: { ratePerMs: PER_MIN(48), capacity: 1, announced: PER_MIN(60) } }
    const fresh = freshLanePaces(paces, { requests: { p: PER_MIN(600) } })
    expect(fresh.requests?.ratePerMs).toBeCloseTo(PER_MIN(480), 12)
    expect(fresh.requests?.capacity).toBe(1)
    // Nothing read yet, or no reading of its own said: as it asked.
    expect(freshLanePaces(paces, {})).toBe(paces)
    const unsaid = { requests: { ratePerMs: PER_MIN(48), capacity: 1 } }
    expect(freshLanePaces(unsaid, { requests: { p: PER_MIN(600) } })).toBe(unsaid)
  })
  it('never slows the lane: a lower shared refill may be a far reset, not a fall', () => {
    // The store's refill for a quota that resets in hours is what its reset implies (7 a minute),
    // the asker's reading the announced 10,000 a minute: scaled by that, two `pacer run`s on the
    // simulator paced at a thousandth of their rate.
    const paces = {
      requests: { ratePerMs: PER_MIN(3_800), capacity: 1, announced: PER_MIN(10_000) },
    }
    expect(freshLanePaces(paces, { requests: { p: PER_MIN(7) } })).toBe(paces)
  })
})
