// Two processes on one database share the partition's limit of calls in flight, so the ceiling an
// announced rate raises (announced-ceiling.ts) is what the whole rate needs, not one worker's
// share of it: at a share, two processes on 2,400 requests a minute answered in 2 s (80 in flight
// needed) stayed at the default 64 together, with no refusal to say why.
import { afterEach, describe, expect, it } from 'vitest'
import type { Permit } from '../../../../src/main/engine/pacing/scheduler'
import { closeTwoProcesses, twoProcesses } from './two-processes'

afterEach(closeTwoProcesses)

const HEADERS = {
  'x-ratelimit-limit-requests': '2400',
  'x-ratelimit-remaining-requests': '2000',
  'x-ratelimit-reset-requests': '10s',
}

describe('the ceiling an announced rate raises, with several processes', () => {
  it('is what the whole rate needs in flight: two processes pass 64 together', async () => {
    const { a, b, pass, clock } = twoProcesses({ initial: 4, max: 64 }, false)
    const held: Permit[] = []
    const want = (s: typeof a) =>
      void s.acquire('p').then(
        (p) => held.push(p),
        () => undefined,
      )
    for (let i = 0; i < 300; i++) {
      want(a)
      want(b)
    }
    let most = 0
    for (let t = 0; t < 40_000; t += 5) {
      await pass(5)
      const due = held.filter((p) => p.sentAt + 2_000 <= clock.now())
      for (const permit of due) {
        held.splice(held.indexOf(permit), 1)
        permit.release('ok', { headers: HEADERS })
      }
      most = Math.max(most, held.length)
    }
    // 2,400 a minute answered in 2 s: 80 in flight, between the two.
    expect(most).toBeGreaterThan(70)
    expect(a.snapshot()[0]?.concurrency ?? 0).toBeGreaterThan(64)
  })
})
