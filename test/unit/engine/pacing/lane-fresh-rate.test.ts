// The shared lane at the partition's freshest reading of the announced rate (lane-fresh-rate.ts):
// a worker's share of the rate it read, scaled to the limit the store last read. Two processes on
// one SQLite file: shared-lane.test.ts.
import { describe, expect, it } from 'vitest'
import { freshLanePaces } from '../../../../src/main/engine/pacing/lane-fresh-rate'

const PER_MIN = (n: number) => n / 60_000
const asked = (share: number, read: number) => ({
  requests: {
    ratePerMs: PER_MIN(share),
    capacity: 1,
    announced: PER_MIN(read),
    announcedMs: 60_000,
  },
})

describe('the lane follows the freshest announced rate', () => {
  it("keeps the asker's share of the rate and scales it to the shared reading", () => {
    // The asker read 60 a minute and paces 0.8 of it; the store read 600 since.
    const paces = asked(48, 60)
    const fresh = freshLanePaces(paces, { requests: { l: 600 } })
    expect(fresh.requests?.ratePerMs).toBeCloseTo(PER_MIN(480), 12)
    expect(fresh.requests?.capacity).toBe(1)
    // The same limit: as it asked. Nothing read yet, or no reading of its own said: as it asked.
    expect(freshLanePaces(paces, { requests: { l: 60 } })).toBe(paces)
    expect(freshLanePaces(paces, {})).toBe(paces)
    const unsaid = { requests: { ratePerMs: PER_MIN(48), capacity: 1 } }
    expect(freshLanePaces(unsaid, { requests: { l: 600 } })).toBe(unsaid)
  })

  it('slows the lane to a fall another worker read', () => {
    // The asker read 600 a minute; the store read 150 since: a quarter of its share.
    const fresh = freshLanePaces(asked(480, 600), { requests: { l: 150 } })
    expect(fresh.requests?.ratePerMs).toBeCloseTo(PER_MIN(120), 12)
  })

  it("compares the store's limit, not its refill: a far reset is not a fall", () => {
    // A quota of 10,000 a minute that resets in hours: the store's refill is what its reset implies
    // (7 a minute), its limit the 10,000 the asker read. Scaled by the refill, two `pacer run`s
    // on the simulator paced at a thousandth of their rate.
    const paces = asked(3_800, 10_000)
    const farReset = { requests: { l: 10_000, p: PER_MIN(7) } } // the store's bucket, refill too
    expect(freshLanePaces(paces, farReset)).toBe(paces)
  })
})
