// "A cap's overshoot pauses nothing": the refusals of calls sent before an overshoot's cut to what
// was served are the cut's business; a refusal in a row after it, or after another cut, pauses.
// Fake timers for the pause's wake-up and a fake clock for now(), moved together.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { CapEdge } from '../../../../src/main/engine/pacing/cap-edge'
import type { PauseChange } from '../../../../src/main/engine/pacing/partition-pacing'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { fakeClock } from '../../../helpers/clock'
import { overshootInto20 } from './controller-helpers'

const RTT = 1_000
const WAIT = { headers: { 'retry-after-ms': '2000' } }

type Clock = ReturnType<typeof fakeClock>

/** A cap of 10 found and held, then risen to 20: the probe carries, the limit regrows past it. */
function regrownPast20(clock: Clock): AdaptiveController {
  const c = new AdaptiveController('p', { initial: 8, max: 64 })
  overshootInto20(c, clock)
  expect(c.concurrency).toBeGreaterThan(20)
  return c
}

afterEach(() => {
  vi.useRealTimers()
})

describe("a cap's overshoot pauses nothing", () => {
  it('only the calls sent before a cut read as an edge', () => {
    const edge = new CapEdge()
    edge.cut(5_000, true)
    expect(edge.explains(4_000, 5_000)).toBe(true)
    expect(edge.explains(5_001, 5_000)).toBe(false)
    // Another cut since (a worker's shared state, or a halving): not this edge's.
    expect(edge.explains(4_000, 6_000)).toBe(false)
    edge.cut(6_000, false)
    expect(edge.explains(4_000, 6_000)).toBe(false)
  })

  it('the controller reads its cut to what was served as an edge, a halving not', () => {
    const clock = fakeClock()
    const c = regrownPast20(clock)
    const sentAt = clock.now() - 10
    clock.advance(1)
    c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 21 })
    expect(c.limit).toBe(19)
    expect(c.overshoot(sentAt)).toBe(true)
    expect(c.overshoot(clock.now() + 1)).toBe(false)
    // Refused again right after: within the quiet stretch the cut halves, and says no edge.
    const again = clock.now() + 1
    clock.advance(RTT)
    c.onOutcome('throttled', { now: clock.now(), sentAt: again, inflight: 19 })
    expect(c.limit).toBeLessThan(19)
    expect(c.overshoot(again)).toBe(false)
  })

  it("the partition does not pause on the overshoot's second refusal, and pauses on a drain", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const clock = fakeClock()
    const controller = regrownPast20(clock)
    const s = new Scheduler({
      clock,
      createController: () => controller,
      pacing: { random: () => 0.5 },
    })
    const pauses: PauseChange[] = []
    s.on('pause', (p) => pauses.push(p))
    const out = controller.concurrency
    const permits = await Promise.all(Array.from({ length: out }, () => s.acquire('p')))
    clock.advance(RTT)
    permits[0]!.release('ok')
    clock.advance(1)
    // The calls above the cap come back refused together: the cut to what was served answers them.
    permits[1]!.release('throttled', WAIT)
    permits[2]!.release('throttled', WAIT)
    permits[3]!.release('throttled', WAIT)
    // Cut to what was served, less the slots the refused calls do not free: not halved.
    expect(controller.limit).toBe(out - 4)
    expect(pauses).toEqual([])
    // A call sent after that cut, refused, and another in a row: an empty bucket pauses.
    for (const p of permits.slice(4)) p.release('ok')
    clock.advance(1)
    const late = [await s.acquire('p'), await s.acquire('p')]
    clock.advance(10)
    late[0]!.release('throttled', WAIT)
    late[1]!.release('throttled', WAIT)
    expect(pauses).toHaveLength(1)
    s.close()
  })
})
