// The pace a named refill sets (refill-pace.ts), on its own: pure, every method takes `now`.
import { describe, expect, it } from 'vitest'
import { RefillPace } from '../../../../src/main/engine/pacing/refill-pace'
import { WindowSpread } from '../../../../src/main/engine/pacing/window-spread'
import {
  PartitionPacing,
  checkPacingOptions,
} from '../../../../src/main/engine/pacing/partition-pacing'

const refill = (ms: number) => ({ 'retry-after-ms': String(ms) })

/** A pace on a window spread's round trips, each success settled there first (partition-pacing.ts). */
function newPace(): RefillPace {
  const trips = new WindowSpread()
  const pace = new RefillPace(trips)
  const succeeded = pace.succeeded.bind(pace)
  pace.succeeded = (now, sentAt) => {
    trips.settled(now, sentAt, true)
    succeeded(now, sentAt)
  }
  return pace
}

/** A pace that learned a 1-s round trip and was refused a call sent 10 ms after another. */
function paced(): { pace: RefillPace; now: number } {
  const pace = newPace()
  pace.admitted(0)
  pace.succeeded(1000, 0)
  pace.admitted(1000)
  pace.admitted(1010)
  // The bucket refills a call in 300 ms: 290 ms after the refused call's send.
  expect(pace.refused(1030, 1010, refill(290))).toBe(true)
  return { pace, now: 1030 }
}

/** `n` calls sent 300 ms apart after `t`, each answered in a second, each free to go: the last send. */
function successes(pace: RefillPace, t: number, n: number): number {
  for (let i = 0; i < n; i++) {
    t += 300
    expect(pace.delayMs(t)).toBe(0)
    pace.admitted(t)
    pace.succeeded(t + 1000, t)
  }
  return t
}

describe('RefillPace', () => {
  it('holds nothing until a refusal names a refill shorter than half a round trip', () => {
    const pace = newPace()
    pace.admitted(0)
    pace.succeeded(1000, 0)
    pace.admitted(1000)
    pace.admitted(1010)
    expect(pace.delayMs(1010)).toBe(0)
    // A slot's "retry-after: 1" names no refill; nor does a wait of more than half a round trip.
    expect(pace.refused(1030, 1010, { 'retry-after': '1' })).toBe(false)
    expect(pace.refused(1030, 1010, refill(600))).toBe(false)
    expect(pace.refused(1030, 1010, undefined)).toBe(false)
    expect(pace.callsPerMs).toBeNull()
    expect(pace.delayMs(1030)).toBe(0)
  })

  it('spaces sends by the spacing of the refused call plus the wait it named', () => {
    const { pace, now } = paced()
    expect(pace.callsPerMs).toBeCloseTo(1 / 300, 9)
    // The last send was at 1010: the next goes at 1310, whatever is in flight.
    expect(pace.delayMs(now)).toBe(280)
    expect(pace.delayMs(1310)).toBe(0)
  })

  it('does not start where two calls went through closer than half the named gap', () => {
    const pace = newPace()
    pace.admitted(0)
    pace.admitted(5)
    pace.succeeded(1000, 0)
    pace.succeeded(1005, 5)
    pace.admitted(1005)
    pace.admitted(1015)
    expect(pace.refused(1040, 1015, refill(290))).toBe(false)
    expect(pace.callsPerMs).toBeNull()
  })

  it('a refusal at the pace cuts its rate to at least 0.8', () => {
    const { pace } = paced()
    pace.admitted(1310)
    // Named 20 ms: Δ + wait = 320 ms, less than the cut's 375.
    expect(pace.refused(1330, 1310, refill(20))).toBe(true)
    expect(1 / (pace.callsPerMs ?? 0)).toBeCloseTo(375, 6)
  })

  it('every 8 successes one call goes at half the gap; carried, the gap halves', () => {
    const { pace } = paced()
    const t = successes(pace, 1010, 8)
    // The probe is due: 150 ms after the last send, not 300.
    expect(pace.delayMs(t + 149)).toBe(1)
    pace.admitted(t + 150)
    pace.succeeded(t + 1150, t + 150)
    expect(1 / (pace.callsPerMs ?? 0)).toBeCloseTo(150, 6)
  })

  it('a refusal before the next probe undoes the probe that carried (a saved burst)', () => {
    const { pace } = paced()
    const t = successes(pace, 1010, 8)
    pace.admitted(t + 150)
    pace.succeeded(t + 250, t + 150)
    expect(pace.delayMs(t + 250)).toBe(50)
    pace.admitted(t + 300)
    // Δ + wait says 160 ms, the cut 187.5: the gap goes back to the 300 it had before the probe.
    expect(pace.refused(t + 320, t + 300, refill(10))).toBe(true)
    expect(1 / (pace.callsPerMs ?? 0)).toBeCloseTo(300, 6)
  })

  it('ends once a round trip holds 64 gaps: the controller paces from there', () => {
    const { pace } = paced()
    let t = 1010
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 8; i++) {
        t += 1 / (pace.callsPerMs ?? 1)
        pace.admitted(t)
        pace.succeeded(t + 1000, t)
      }
      t += pace.delayMs(t)
      pace.admitted(t)
      pace.succeeded(t + 1000, t)
      if (pace.callsPerMs === null) break
    }
    // 300 ms halved five times is 9.4 ms: 106 a round trip of 1 s.
    expect(pace.callsPerMs).toBeNull()
    expect(pace.delayMs(t + 1)).toBe(0)
  })
})

/** Successes 300 ms apart after `t` until a probe (half the gap) is due: the last send, and how many. */
function untilProbe(pace: RefillPace, t: number): { t: number; successes: number } {
  let successes = 0
  while (pace.delayMs(t + 150) > 0) {
    t += 300
    pace.admitted(t)
    pace.succeeded(t + 1000, t)
    successes++
  }
  return { t, successes }
}

describe('RefillPace probes in time', () => {
  it('a refused probe doubles the successes before the next: 8, then 16, then 32', () => {
    const { pace } = paced()
    let t = 1010
    const between: number[] = []
    for (let refusedProbes = 0; refusedProbes < 3; refusedProbes++) {
      const due = untilProbe(pace, t)
      t = due.t
      between.push(due.successes)
      t += 150
      pace.admitted(t)
      // The probe's own refusal keeps the gap: 150 ms after the send before it, plus 150 named.
      expect(pace.refused(t + 20, t, refill(150))).toBe(true)
      expect(1 / (pace.callsPerMs ?? 0)).toBeCloseTo(300, 6)
    }
    expect(between).toEqual([8, 16, 32])
  })

  it('a probe goes at least every 30 s once 8 successes came, however many probes were refused', () => {
    const { pace } = paced()
    let t = 1010
    // Refused probes double the successes between probes: 8, 16, 32, 64, then 128.
    for (let refusedProbes = 0; refusedProbes < 4; refusedProbes++) {
      t = untilProbe(pace, t).t
      t += 150
      pace.admitted(t)
      expect(pace.refused(t + 20, t, refill(150))).toBe(true)
    }
    // 128 successes at 300 ms would be 38.4 s: the probe comes 30 s after the last one.
    const probedAt = t
    const due = untilProbe(pace, t)
    t = due.t
    const sends = due.successes
    expect(sends).toBeGreaterThan(64)
    expect(sends).toBeLessThan(101)
    expect(t - probedAt).toBeGreaterThanOrEqual(30_000)
    expect(pace.delayMs(t + 150)).toBe(0)
  })
})

describe('PartitionPacing with a named refill', () => {
  it('answers the refusal itself, spaces the sends and tells the controller the rate', () => {
    const pacing = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }))
    const t = 1_000_000
    pacing.settle(t + 1000, pacing.admit(t), 'ok')
    pacing.admit(t + 1000)
    const refusedCall = pacing.admit(t + 1010)
    const settled = pacing.settle(t + 1030, refusedCall, 'throttled', {
      headers: refill(290),
    })
    // Not the controller's: no cut of the limit, and a lone refusal after a success, no pause.
    expect(settled.absorbed).toBe(true)
    expect(settled.pause).toBeNull()
    expect(pacing.announcedRate(t + 1030)).toEqual({ callsPerMs: 1 / 300, spread: true })
    expect(pacing.delayMs(t + 1030)).toBeGreaterThanOrEqual(280)
  })
})
