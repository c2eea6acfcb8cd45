// A rate nobody announces told from a cap by spacing (spaced-rate.ts), on its own: pure, every
// method takes `now`.
import { describe, expect, it } from 'vitest'
import { SpacedRate } from '../../../../src/main/engine/pacing/spaced-rate'
import { WindowSpread } from '../../../../src/main/engine/pacing/window-spread'
import {
  PartitionPacing,
  checkPacingOptions,
} from '../../../../src/main/engine/pacing/partition-pacing'

/** A SpacedRate beside the partition's real round trips, in the partition's order. */
function spacedRate(): SpacedRate {
  const spread = new WindowSpread()
  const rate = new SpacedRate(spread)
  const admitted = rate.admitted.bind(rate)
  const settled = rate.settled.bind(rate)
  rate.admitted = (now) => {
    admitted(now)
    spread.admitted(now, false)
  }
  rate.settled = (now, sentAt, outcome) => {
    spread.settled(now, sentAt, outcome === 'ok')
    settled(now, sentAt, outcome)
  }
  return rate
}

/**
 * Calls one at a time, each answered in a second, then a probe of two in the instant of a refill:
 * the probe's call (sent with one call out, in the same ms as the send before it) is refused.
 * Returns the time of the refusal and the send still out.
 */
function refusedTogether(rate: SpacedRate): { now: number; out: number } {
  let t = 0
  for (let i = 0; i < 4; i++) {
    expect(rate.delayMs(t)).toBe(0)
    rate.admitted(t)
    rate.settled(t + 1000, t, 'ok')
    t += 1000
  }
  rate.admitted(t)
  rate.admitted(t)
  rate.settled(t + 20, t, 'throttled')
  expect(rate.refused(t + 20, t, undefined)).toBe(false)
  return { now: t + 20, out: t }
}

describe('SpacedRate', () => {
  it('holds nothing while no close send was refused', () => {
    const rate = spacedRate()
    rate.admitted(0)
    rate.admitted(0)
    expect(rate.delayMs(0)).toBe(0)
    expect(rate.callsPerMs).toBeNull()
  })

  it('sends the next call with as many out a quarter of a round trip apart', () => {
    const rate = spacedRate()
    const { now, out } = refusedTogether(rate)
    // One call out (sent at `out`): a second waits until 250 ms after it.
    expect(rate.delayMs(now)).toBe(out + 250 - now)
    expect(rate.delayMs(out + 250)).toBe(0)
    // With nothing out, a call goes at once.
    rate.settled(out + 1000, out, 'ok')
    expect(rate.delayMs(out + 1000)).toBe(0)
  })

  /** The test served apart, and the call out before it too: the answers at `t`. */
  function servedApart(rate: SpacedRate, out: number): number {
    const test = out + 250
    rate.admitted(test)
    rate.settled(out + 1000, out, 'ok')
    rate.settled(test + 1000, test, 'ok')
    expect(rate.callsPerMs).toBeNull()
    expect(rate.delayMs(test + 1000)).toBe(0)
    return test + 1000
  }

  /** A test served apart, then two calls sent together at `t` (the pair that tells a rate). */
  function pairSent(): { rate: SpacedRate; t: number } {
    const rate = spacedRate()
    const t = servedApart(rate, refusedTogether(rate).out)
    rate.admitted(t)
    rate.admitted(t)
    return { rate, t }
  }

  it('a rate: served apart, then two sent together refused, paces at the spacing that carried', () => {
    const rate = spacedRate()
    const t = servedApart(rate, refusedTogether(rate).out)
    rate.admitted(t)
    // The second goes in the first's instant or waits until none is out; a third waits.
    expect(rate.delayMs(t + 5)).toBeGreaterThan(0)
    expect(rate.delayMs(t)).toBe(0)
    rate.admitted(t)
    expect(rate.delayMs(t)).toBeGreaterThan(0)
    rate.settled(t + 20, t, 'throttled')
    expect(rate.refused(t + 20, t, undefined)).toBe(true)
    expect(1 / (rate.callsPerMs ?? 0)).toBeCloseTo(250, 6)
    expect(rate.delayMs(t + 20)).toBe(230)
  })

  it("the spaced pace's refusals are its own: a call sent at its gap refused cuts it once", () => {
    const { rate, t } = pairSent()
    rate.settled(t + 20, t, 'throttled')
    expect(rate.refused(t + 20, t, undefined)).toBe(true)
    // A call at the pace, refused: the pace's, its gap 250 / 0.8.
    rate.admitted(t + 250)
    rate.settled(t + 270, t + 250, 'throttled')
    expect(rate.refused(t + 270, t + 250, undefined)).toBe(true)
    expect(1 / (rate.callsPerMs ?? 0)).toBeCloseTo(312.5, 6)
    // A call sent before that cut, refused after it: the same episode, no second cut.
    rate.settled(t + 280, t + 260, 'throttled')
    expect(rate.refused(t + 280, t + 260, undefined)).toBe(true)
    expect(1 / (rate.callsPerMs ?? 0)).toBeCloseTo(312.5, 6)
  })

  it('the spaced pace grows between its probes: a single-call bucket that rose by half is found', () => {
    // The pair tells a bucket of a single call refilled every 250 ms. At 20 s it refills every
    // 170 ms (x1.47): the pace's probes at half its gap are refused before the rise and after it,
    // so only growth between them finds it. Calls go when the pace lets them; answers in a second
    // (20 ms for a refusal).
    const { rate, t } = pairSent()
    rate.settled(t + 20, t, 'throttled')
    expect(rate.refused(t + 20, t, undefined)).toBe(true)
    let refillMs = 250
    let lastServed = t
    const answers: { at: number; sentAt: number; ok: boolean }[] = [
      { at: t + 1000, sentAt: t, ok: true },
    ]
    const late = { served: 0, refused: 0 }
    for (let now = t + 21; now < t + 60_000; now++) {
      if (now === t + 20_000) refillMs = 170
      for (let i = 0; i < answers.length;) {
        const a = answers[i] as (typeof answers)[number]
        if (a.at !== now) {
          i++
          continue
        }
        answers.splice(i, 1)
        rate.settled(now, a.sentAt, a.ok ? 'ok' : 'throttled')
        if (!a.ok) expect(rate.refused(now, a.sentAt, undefined)).toBe(true)
      }
      if (rate.delayMs(now) > 0) continue
      rate.admitted(now)
      const ok = now - lastServed >= refillMs
      if (ok) lastServed = now
      if (now >= t + 40_000) late[ok ? 'served' : 'refused']++
      answers.push({ at: now + (ok ? 1000 : 20), sentAt: now, ok })
    }
    // The last 20 s: three quarters of what the bucket refilled at least (20,000 / 170 = 118
    // calls; 98 served, 5 refused). A pace that did not grow served 79, its probes refused.
    expect(late.served).toBeGreaterThan(0.75 * (20_000 / 170))
    expect(late.refused / (late.served + late.refused)).toBeLessThan(0.08)
  })

  it('a rate whose pair answers the success first: still paced', () => {
    // A provider's refusal need not come back before the other call's answer.
    const { rate, t } = pairSent()
    rate.settled(t + 10, t, 'ok')
    expect(rate.callsPerMs).toBeNull()
    rate.settled(t + 20, t, 'throttled')
    expect(rate.refused(t + 20, t, undefined)).toBe(true)
    expect(1 / (rate.callsPerMs ?? 0)).toBeCloseTo(250, 6)
  })

  it('holds a pair for its round trips at most: a call that stays out holds no other for long', () => {
    const rate = spacedRate()
    const t = servedApart(rate, refusedTogether(rate).out)
    // One call out and not answered (a long stream): the pair waits for none to be out...
    rate.admitted(t)
    expect(rate.delayMs(t + 100)).toBe(250)
    // ... for ten round trips of a second at most, then nothing holds.
    expect(rate.delayMs(t + 9_900)).toBe(100)
    expect(rate.delayMs(t + 10_001)).toBe(0)
    expect(rate.delayMs(t + 300_000)).toBe(0)
  })

  /** Two sent together at `t` with one call out, the second refused: let go, no test armed. */
  function letGo(rate: SpacedRate, t: number): void {
    rate.admitted(t)
    rate.admitted(t)
    rate.settled(t + 20, t, 'throttled')
    expect(rate.refused(t + 20, t, undefined)).toBe(false)
    expect(rate.delayMs(t + 20)).toBe(0)
  }

  it('a cap that rose: served apart and together, never paces', () => {
    const { rate, t } = pairSent()
    rate.settled(t + 1000, t, 'ok')
    rate.settled(t + 1000, t, 'ok')
    expect(rate.callsPerMs).toBeNull()
    // Its next edge, refused together with one call out, is let go without a test.
    letGo(rate, t + 1000)
    expect(rate.callsPerMs).toBeNull()
  })

  it('a cap: refused apart as well, the next close refusal is let go without a test', () => {
    const rate = spacedRate()
    const { out } = refusedTogether(rate)
    const test = out + 250
    rate.admitted(test)
    rate.settled(test + 20, test, 'throttled')
    expect(rate.refused(test + 20, test, undefined)).toBe(false)
    rate.settled(out + 1000, out, 'ok')
    expect(rate.callsPerMs).toBeNull()
    // Refused together again: let go, so a second call with one out goes at once.
    letGo(rate, out + 1000)
  })

  it('paces a partition: the test spaced, the rate refused together taken from the controller', () => {
    const pacing = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }))
    let t = 1_000_000
    for (let i = 0; i < 4; i++, t += 1000) pacing.settle(t + 1000, pacing.admit(t), 'ok')
    // A probe of two in a refill's instant, refused: the controller's, and a test armed.
    const out = pacing.admit(t)
    expect(pacing.settle(t + 20, pacing.admit(t), 'throttled', {}).absorbed).toBe(false)
    expect(pacing.delayMs(t + 20)).toBeGreaterThanOrEqual(230)
    const test = pacing.admit(t + 250)
    pacing.settle(t + 1000, out, 'ok')
    pacing.settle(t + 1250, test, 'ok')
    // Two together, the second refused: the spaced pace's, at the test's spacing.
    t += 1250
    pacing.admit(t)
    const settled = pacing.settle(t + 20, pacing.admit(t), 'throttled', {})
    expect(settled.absorbed).toBe(true)
    expect(pacing.announcedRate(t + 20)).toEqual({ callsPerMs: 1 / 250, spread: true })
  })
  /**
   * The lone partition's sequence (above) on `pacing`: a probe refused in a refill's instant, a
   * call apart served, then two together, the second refused. True if a pace took that refusal.
   */
  function pairRefusedAbsorbed(pacing: PartitionPacing): boolean {
    let t = 1_000_000
    for (let i = 0; i < 4; i++, t += 1000) pacing.settle(t + 1000, pacing.admit(t), 'ok')
    const out = pacing.admit(t)
    expect(pacing.settle(t + 20, pacing.admit(t), 'throttled', {}).absorbed).toBe(false)
    const test = pacing.admit(t + 250)
    pacing.settle(t + 1000, out, 'ok')
    pacing.settle(t + 1250, test, 'ok')
    t += 1250
    pacing.admit(t)
    return pacing.settle(t + 20, pacing.admit(t), 'throttled', {}).absorbed
  }

  it('arms nothing where other workers send on the partition: its calls out are not all the calls out', () => {
    // Three processes on a cap read one another's calls as room: a cap that rose from 5 to 55 was
    // paced as a rate (#100021 with --processes 3, 0.932 -> 0.160 used).
    const counted = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }))
    counted.adopt(null, 0, 3)
    expect(pairRefusedAbsorbed(counted)).toBe(false)
    expect(counted.announcedRate(1_005_270)).toBeNull()
    // A shared store that does not count its workers (Redis): not known to be alone, no test.
    const uncounted = new PartitionPacing(
      'p',
      checkPacingOptions({ random: () => 0.5 }),
      'w',
      false,
    )
    expect(pairRefusedAbsorbed(uncounted)).toBe(false)
    // The same store saying this worker is alone: the rule is back.
    const alone = new PartitionPacing('p', checkPacingOptions({ random: () => 0.5 }), 'w', false)
    alone.adopt(null, 0, 1)
    expect(pairRefusedAbsorbed(alone)).toBe(true)
  })
})
