// A worker adopts another's narrowing when its own call is released (release-adopt.ts), not only
// at its next admission: the call that admission sends would go by the pace of a whole window.
import { afterEach, describe, expect, it } from 'vitest'
import { closeTwoProcesses, twoProcesses } from './two-processes'

afterEach(closeTwoProcesses)

const HEADERS = {
  'x-ratelimit-limit-requests': '2400',
  'x-ratelimit-remaining-requests': '2000',
  'x-ratelimit-reset-requests': '10s',
}

describe("another worker's narrowing, at this worker's release", () => {
  it('is adopted with the release, before any admission', async () => {
    const { a, b, pass } = twoProcesses({ initial: 8, max: 8 }, false)
    const take = async (s: typeof a) => {
      const p = s.acquire('p')
      await pass(0)
      return p
    }
    const [a1, a2] = [await take(a), await take(a)]
    const [b1, b2] = [await take(b), await take(b)]
    a1.release('ok', { headers: HEADERS })
    b1.release('ok', { headers: HEADERS })
    await pass(10)
    expect(b.pacing('p')?.pace?.burstMs).toBe(60_000)
    // Refused with room announced: the window enforced is shorter, w1 narrows (written at once).
    a2.release('throttled', { headers: HEADERS })
    await pass(10)
    expect(a.pacing('p')?.pace?.burstMs).toBe(0)
    // w2 has nothing waiting: its release admits nothing, and still its pace is narrowed.
    b2.release('ok', { headers: HEADERS })
    await pass(10)
    expect(b.pacing('p')?.pace?.burstMs).toBe(0)
  })
})
