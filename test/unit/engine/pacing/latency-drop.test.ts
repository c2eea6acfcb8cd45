import { describe, expect, it } from 'vitest'
import { AdaptiveController } from '../../../../src/main/engine/pacing/adaptive'
import { LatencyDrop } from '../../../../src/main/engine/pacing/latency-drop'
import { seededRandom } from '../../../helpers/random'
import { fakeClock } from '../../../helpers/clock'

/** Holds 8 below a refused 9 with answers of `rttMs`; the next probe far off (a long cooldown). */
function heldBelowNine(rttMs: number) {
  const clock = fakeClock()
  const c = new AdaptiveController('p', { initial: 9, cooldownMs: 600_000 })
  let sentAt = clock.now()
  clock.advance(100)
  c.onOutcome('throttled', { now: clock.now(), sentAt, inflight: 9 })
  for (let i = 0; i < 100 && c.concurrency < 8; i++) {
    sentAt = clock.now()
    clock.advance(rttMs)
    c.onOutcome('ok', { now: clock.now(), sentAt, inflight: c.concurrency })
  }
  expect(c.concurrency).toBe(8)
  return { c, clock }
}

/** Successes at the held level, each taking `rtt(i)`; the index of the first probe, or -1. */
function answers(h: ReturnType<typeof heldBelowNine>, n: number, rtt: (i: number) => number) {
  for (let i = 0; i < n; i++) {
    const sentAt = h.clock.now()
    h.clock.advance(rtt(i))
    const change = h.c.onOutcome('ok', { now: h.clock.now(), sentAt, inflight: 8 })
    if (change?.cause === 'probe') return i
  }
  return -1
}

describe('latency drop: answers markedly faster than at the level bring the probe forward', () => {
  it('a server whose answers fall from 2.5 s to 1.2 s at the same level is probed at once', () => {
    const h = heldBelowNine(2500)
    const nextProbeAt = h.c.memory.nextProbeAt
    // Two windows of answers at 2.5 s (the first is the level's reference), then faster ones.
    const probedAt = answers(h, 200, (i) => (i < 24 ? 2500 : 1200))
    expect(probedAt).toBeGreaterThan(24)
    expect(probedAt).toBeLessThanOrEqual(24 + 16)
    expect(h.clock.now()).toBeLessThan(nextProbeAt)
  })

  it('a log-normal spread (sigma 0.5) and a heavy tail do not read as a drop', () => {
    const random = seededRandom(7)
    const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
    const drop = new LatencyDrop()
    drop.reset(8)
    // 100 windows of 8 answers at one level: 3 % of them 20 times the median.
    const drops = Array.from({ length: 800 }, () =>
      drop.observe(1000 * Math.exp(0.5 * normal()) * (random() < 0.03 ? 20 : 1)),
    )
    expect(drops.filter(Boolean)).toHaveLength(0)
  })

  it('answers as slow as at first leave the probe to its time', () => {
    const h = heldBelowNine(2500)
    const nextProbeAt = h.c.memory.nextProbeAt
    answers(h, 300, () => 2500)
    expect(h.c.memory.probing).toBe(true)
    expect(h.clock.now()).toBeGreaterThanOrEqual(nextProbeAt)
  })

  it('one early probe per level; a new level learns its latency afresh', () => {
    const drop = new LatencyDrop()
    drop.reset(8)
    const feed = (ms: number, n: number) => Array.from({ length: n }, () => drop.observe(ms))
    expect(feed(2000, 8)).not.toContain(true)
    expect(feed(1000, 8).at(-1)).toBe(true)
    // The reference is gone: the next window is the new reference, not a drop.
    expect(feed(500, 8)).not.toContain(true)
    drop.reset(8)
    expect(feed(500, 16)).not.toContain(true)
  })
})
