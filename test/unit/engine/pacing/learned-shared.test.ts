// The paces learned from refusals, shared through the SQLite file (learned-pace.ts): two
// schedulers on two connections to one file, what two processes on one database see. A cut
// learned by one is seen by the other, once per episode between them; the floor's learned pace is
// the partition's, split between the workers at the floor. Fake timers for the wake-ups and one
// fake clock for now(), moved together.
import { afterEach, describe, expect, it } from 'vitest'
import type { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import type { LearnedPaces } from '../../../../src/main/engine/pacing/learned-pace'
import { closeTwoProcesses, twoProcesses as twoOn } from './two-processes'

afterEach(closeTwoProcesses)

/** Two schedulers, each with its own lean store on its own connection to one file. */
function twoProcesses(params: { initial: number; max: number }, lean = true) {
  const { a, b, pass, look } = twoOn(params, lean)
  const pace = (s: Scheduler) => s.snapshot().find((p) => p.partition === 'p')?.pace
  /** The learned paces as the file holds them. */
  const learned = () => {
    const text = look
      .prepare("SELECT learned FROM pacing_partitions WHERE partition = 'p'")
      .pluck()
      .get()
    return text ? (JSON.parse(text as string) as LearnedPaces) : null
  }
  return { a, b, pass, pace, learned }
}

const requests = (limit: number, remaining: number) => ({
  'x-ratelimit-limit-requests': String(limit),
  'x-ratelimit-remaining-requests': String(remaining),
  'x-ratelimit-reset-requests': '1s',
})

describe('the announced rate’s learned pace, shared', () => {
  it('a refusal in one process narrows and cuts the other’s pace, once per episode for both', async () => {
    // Per call through the file (no block): both hold calls at once, as under load.
    const { a, b, pass, pace, learned } = twoProcesses({ initial: 4, max: 4 }, false)
    // Both read the announced budget (60 a minute: one a second).
    for (const s of [a, b]) {
      const p = await s.acquire('p')
      await pass(100)
      p.release('ok', { headers: requests(60, 50) })
    }
    expect(pace(a)?.burstMs).toBe(60_000)
    expect(pace(b)?.burstMs).toBe(60_000)

    // A refusal the budget does not explain (it showed room), in A: one call at a time, for both.
    await pass(1000)
    const refused = await a.acquire('p')
    await pass(100)
    refused.release('throttled', { headers: requests(60, 40) })
    expect(pace(a)?.burstMs).toBe(0)
    expect(learned()?.send).toMatchObject({ burstMs: 0, scale: 1 })
    await pass(1000)
    const inB = await b.acquire('p')
    expect(pace(b)?.burstMs).toBe(0)

    // A call of A sent before B's refusal, and A's rate as it paces now.
    await pass(1000)
    const inA = a.acquire('p')
    await pass(1000)
    const early = await inA
    const before = pace(a)?.perMinute.requests ?? 0

    // Still refused one at a time, in B: the share that is ours is cut to 0.8, for A too.
    await pass(100)
    inB.release('throttled', { headers: requests(60, 40) })
    const cut = learned()?.send
    expect(cut?.scale).toBeCloseTo(0.8, 6)
    // A's refusal of the call it sent before B's cut is the same episode: no second cut.
    // (No headers: A's estimate of what others spend stays as it was, the ratio below is the share's.)
    early.release('throttled')
    expect(learned()?.send).toEqual(cut)
    // B has a call in flight again: A's pace is its half of the rate, as when it sent `early`.
    const hold = await b.acquire('p')
    const next = a.acquire('p')
    await pass(3000)
    await next
    // A paces at the shared share: 0.8, regrown 2.5 % a second since B's cut (at most 3 s).
    const ratio = (pace(a)?.perMinute.requests ?? 0) / before
    expect(ratio).toBeGreaterThanOrEqual(0.8 - 1e-9)
    expect(ratio).toBeLessThanOrEqual(0.8 * 1.025 ** 3 + 1e-9)
    hold.release('ok')
  })
})

describe('the floor’s learned pace, shared', () => {
  it('a refusal at the floor in one process paces the other; their successes grow one rate', async () => {
    const { a, b, pass, pace } = twoProcesses({ initial: 1, max: 1 })
    const first = await a.acquire('p')
    await pass(1000)
    first.release('ok')
    const refused = await a.acquire('p')
    await pass(1000)
    refused.release('throttled')
    // One call a round trip (1 s) was what the floor sent: the pace starts at 0.8 of it.
    expect(pace(a)).toEqual({ burstMs: 0, perMinute: { requests: 48 }, learned: true })
    // The console of a process that drives nothing here shows it, from the shared record.
    expect(b.view().find((p) => p.partition === 'p')?.pace).toEqual({
      burstMs: 0,
      perMinute: { requests: 48 },
      learned: true,
    })
    await pass(1300)
    const inB = await b.acquire('p')
    expect(pace(b)).toEqual({ burstMs: 0, perMinute: { requests: 48 }, learned: true })

    // B's success grows the partition's rate, as A sees it.
    await pass(1000)
    inB.release('ok')
    const grown = pace(b)?.perMinute.requests ?? 0
    expect(grown).toBeGreaterThan(48)
    const inA = a.acquire('p')
    await pass(0)
    const permit = await inA
    expect(pace(a)?.perMinute.requests).toBeCloseTo(grown, 6)

    // Both sent at the floor lately: each spaces its own sends at half the rate (2 / rate apart).
    await pass(1000)
    permit.release('ok')
    const rate = pace(a)?.perMinute.requests ?? 0
    const log: string[] = []
    void a.acquire('p').then(() => log.push('a'))
    const spacing = (2 * 60_000) / rate
    // A last sent 1 s ago: it waits for the rest of two spacings of the partition's rate.
    await pass(Math.floor(spacing - 1000) - 50)
    expect(log).toEqual([])
    await pass(100)
    expect(log).toEqual(['a'])
  })
})
