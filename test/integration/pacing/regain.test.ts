// A provider's concurrency capacity falls, then triples again: a real `pacer run` (defaults:
// adaptive controller, pacing on) against a loopback vendor must use the raised capacity again
// within a bound, not stay at the level it learned while the capacity was low. The time to regain
// is read where the capacity lives: the vendor's own timeline of calls held at once.
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { prefixedBatch, query, runOnVendor, tempDir } from '../../helpers/cli'
import { closeVendors, fakeVendor, vendorDatabase, type Held } from '../../helpers/fake-vendor'

afterEach(closeVendors)

const HIGH = 6
const LOW = 2
/** The phases' starts, in ms after the vendor's first request. */
const FALL_MS = 4000
const RISE_MS = 10_000
const LATENCY_MS = 220
const TASKS = 900
/**
 * The scheduler promises the raised capacity in use within ~10 round trips; a loaded 2-core machine
 * delays timers and the child's event loop, so the test allows 40 round trips or 12 s, the larger.
 */
const BOUND_MS = Math.max(40 * LATENCY_MS, 12_000)

/** When the vendor first held `need` calls at once at or after `from`; null if it never did. */
function reachedAt(timeline: Held[], from: number, need: number): number | null {
  return timeline.find((h) => h.at >= from && h.held >= need)?.at ?? null
}

/** The most calls the vendor held at once in [from, to). */
const mostHeld = (timeline: Held[], from: number, to: number) =>
  Math.max(0, ...timeline.filter((h) => h.at >= from && h.at < to).map((h) => h.held))

describe('pacer run regains a capacity that falls and then triples', () => {
  it(`${HIGH} → ${LOW} → ${HIGH} slots: 90 % of the raised capacity in use within max(40 round trips, 12 s); each task once`, async () => {
    const dir = tempDir('pacer-regain-')
    const home = tempDir('pacer-regain-home-')
    const vendor = await fakeVendor({
      capacity: [
        { afterMs: 0, value: HIGH },
        { afterMs: FALL_MS, value: LOW },
        { afterMs: RISE_MS, value: HIGH },
      ],
      // 154-286 ms a call; a refusal says `retry-after: 1`, as a concurrency cap that knows no wait.
      latencyMs: LATENCY_MS,
      jitter: 0.3,
      retryAfterMs: 1000,
    })
    const db = vendorDatabase(dir, vendor)
    const run = runOnVendor(prefixedBatch(dir, 'r', TASKS), db, [], { HOME: home })
    const done = await run.done
    expect(done.code, done.stderr).toBe(0)
    expect(JSON.parse(done.stdout) as RunSummary).toMatchObject({
      tasks: TASKS,
      executed: TASKS,
      failed: 0,
    })

    // Every task ran once: each prompt answered once by the vendor, one executed row on the ledger.
    expect(vendor.answered.size).toBe(TASKS)
    expect([...vendor.answered.values()].every((n) => n === 1)).toBe(true)
    const [executed] = query<{ n: number }>(
      db,
      "SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed'",
    )
    expect(executed?.n).toBe(TASKS)

    const first = vendor.requests[0]!.at
    const fall = first + FALL_MS
    const rise = first + RISE_MS
    // The schedule happened as written, or the figure below would prove nothing: the run was full
    // before the fall, was held to the low level after it (the calls accepted before it ended),
    // was refused there, and still had work when the bound ran out.
    expect(mostHeld(vendor.held, first, fall)).toBe(HIGH)
    expect(mostHeld(vendor.held, fall + 2 * LATENCY_MS, rise)).toBeLessThanOrEqual(LOW)
    expect(vendor.phases[1]!.refused).toBeGreaterThan(0)
    expect(vendor.held.at(-1)!.at).toBeGreaterThan(rise + BOUND_MS)

    const need = Math.ceil(0.9 * HIGH)
    const regained = reachedAt(vendor.held, rise, need)
    const regainMs = regained === null ? null : regained - rise
    console.log(
      `regain: ${need} of ${HIGH} slots in use ${regainMs ?? 'never'} ms after the rise ` +
        `(${regainMs === null ? '-' : (regainMs / LATENCY_MS).toFixed(1)} round trips; ` +
        `bound ${BOUND_MS} ms); throttled ${vendor.throttled} of ${vendor.requests.length}`,
    )
    expect(regainMs, 'the raised capacity was never used again').not.toBeNull()
    expect(regainMs!).toBeLessThanOrEqual(BOUND_MS)
  }, 120_000)
})
