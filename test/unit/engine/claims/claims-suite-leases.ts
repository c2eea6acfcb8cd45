// The claim store contract's leases (claims-suite.ts runs it for every backend): renewal and
// takeover by epoch, and wait() for a claim to complete, be released or expire.
import { describe, expect, it, vi } from 'vitest'
import { fingerprint } from '../../../../src/main/engine/core/fingerprint'
import { systemClock } from '../../../../src/main/engine/core/types'
import type { FakeClock } from '../../../helpers/clock'
import { until } from '../../../helpers/until'
import { FP, LEASE, type ClaimHandles, type SuiteParts } from './claims-suite-parts'

/** The lease tests, inside the suite's describe. */
export function claimLeaseSuite(parts: SuiteParts): void {
  let h: ClaimHandles
  let clock: FakeClock
  const store = async (opts?: Parameters<SuiteParts['store']>[0]) => {
    const s = await parts.store(opts)
    h = parts.handles()
    clock = parts.clock()
    return s
  }
  const row = parts.row

  describe('renew and takeOver', () => {
    it('renew extends the lease of the owning epoch', async () => {
      const s = await store()
      const t0 = clock.t
      await s.claim(FP, 'A', 1000)
      clock.advance(900)
      expect(await s.renew(FP, 1, 1000)).toBe(true)
      clock.advance(900)
      expect(await s.claim(FP, 'B', 1000)).toEqual({
        kind: 'busy',
        owner: 'A',
        epoch: 1,
        leaseUntil: t0 + 1900,
      })
      expect(await s.renew(FP, 2, 1000)).toBe(false)
    })

    it('takeOver succeeds only after expiry and only for the expected epoch', async () => {
      const s = await store()
      await s.claim(FP, 'A', LEASE)
      expect(await s.takeOver(FP, 'B', 1, LEASE)).toBe(false)
      clock.advance(LEASE + 1)
      expect(await s.takeOver(FP, 'B', 2, LEASE)).toBe(false)
      expect(await s.takeOver(FP, 'B', 1, LEASE)).toBe(true)
      expect(await s.takeOver(FP, 'C', 1, LEASE)).toBe(false)
      expect(await s.claim(FP, 'C', LEASE)).toMatchObject({ kind: 'busy', owner: 'B', epoch: 2 })
    })

    it('takeOver never touches a completed or released claim', async () => {
      const s = await store()
      await s.claim(FP, 'A', LEASE)
      await s.complete(FP, 1, '"done"', 'succeeded')
      clock.advance(LEASE + 1)
      expect(await s.takeOver(FP, 'B', 1, LEASE)).toBe(false)
      const other = fingerprint('other', {})
      await s.claim(other, 'A', LEASE)
      await s.release(other, 1)
      clock.advance(LEASE + 1)
      expect(await s.takeOver(other, 'B', 1, LEASE)).toBe(false)
    })
  })

  describe('wait', () => {
    const slow = { pollMinMs: 60_000, pollMaxMs: 60_000 }

    it('an in-process waiter is woken by complete(), not by polling', async () => {
      const s = await store(slow)
      await s.claim(FP, 'A', LEASE)
      const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
      setImmediate(() => void s.complete(FP, 1, '"shared"', 'succeeded'))
      // With a 60 s poll and a 5 s timeout, only the event can produce 'completed'.
      expect(await waiting).toMatchObject({
        kind: 'completed',
        result: { result: '"shared"', owner: 'A' },
      })
    })

    it('is woken by release() and reports it', async () => {
      const s = await store(slow)
      await s.claim(FP, 'A', LEASE)
      const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
      setImmediate(() => void s.release(FP, 1))
      expect(await waiting).toEqual({ kind: 'released' })
    })

    it('answers at once for a completed, released, expired or missing claim', async () => {
      const s = await store({ resultTtlMs: 1000, ...slow })
      const opts = { timeoutMs: 5_000, leaseMs: LEASE }
      await s.claim(FP, 'A', LEASE)
      await s.complete(FP, 1, '"r"', 'succeeded')
      expect(await s.wait(FP, 'B', opts)).toMatchObject({ kind: 'completed' })
      clock.advance(1000)
      expect(await s.wait(FP, 'B', opts)).toEqual({ kind: 'released' })

      const other = fingerprint('other', {})
      await s.claim(other, 'A', LEASE)
      await s.release(other, 1)
      expect(await s.wait(other, 'B', opts)).toEqual({ kind: 'released' })
      expect(await s.wait(fingerprint('never', {}), 'B', opts)).toEqual({ kind: 'released' })
    })

    it('takes over by compare-and-set when the lease has already expired', async () => {
      const s = await store()
      await s.claim(FP, 'A', LEASE)
      clock.advance(LEASE + 1)
      expect(await s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })).toEqual({
        kind: 'owned',
        epoch: 2,
        tookOver: true,
        previousOwner: 'A',
        previousEpoch: 1,
      })
      expect(await s.complete(FP, 1, '"A"', 'succeeded')).toBe(false)
    })

    it('notices a lease expiring while it waits (fake clock moved on)', async () => {
      const s = await store({ pollMinMs: 2, pollMaxMs: 10 })
      await s.claim(FP, 'A', LEASE)
      const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
      setImmediate(() => clock.advance(LEASE + 1))
      expect(await waiting).toMatchObject({ kind: 'owned', epoch: 2, previousOwner: 'A' })
    })

    it('never sleeps past the lease expiry, however long the poll interval', async () => {
      await store()
      const s = h.store({ clock: systemClock, ...slow })
      await s.claim(FP, 'A', 50)
      expect(await s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })).toMatchObject({
        kind: 'owned',
        tookOver: true,
      })
    })

    it('finds progress made through another connection (another process)', async () => {
      const here = await store({ pollMinMs: 2, pollMaxMs: 10 })
      const elsewhere = h.elsewhere({ clock })
      await elsewhere.claim(FP, 'A', LEASE)
      // Each look reads the clock once, and looks come one at a time: a second has begun once
      // the first found the claim still held. Only then does the other connection complete it.
      const looks = vi.spyOn(clock, 'now')
      const waiting = here.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
      await until(() => looks.mock.calls.length >= 2 || undefined)
      looks.mockRestore()
      void elsewhere.complete(FP, 1, '"from afar"', 'succeeded')
      expect(await waiting).toMatchObject({
        kind: 'completed',
        result: { result: '"from afar"' },
      })
    })

    it('returns wait_timeout while the owner still holds the lease', async () => {
      const s = await store({ pollMinMs: 5, pollMaxMs: 10 })
      await s.claim(FP, 'A', LEASE)
      expect(await s.wait(FP, 'B', { timeoutMs: 40, leaseMs: LEASE })).toEqual({
        kind: 'wait_timeout',
      })
      expect(await row()).toMatchObject({ owner: 'A', epoch: 1, state: 'running' })
    })

    it('rejects with the abort reason when aborted, before or during the wait', async () => {
      const s = await store(slow)
      await s.claim(FP, 'A', LEASE)
      const before = new AbortController()
      before.abort(new Error('shutting down'))
      await expect(
        s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE, signal: before.signal }),
      ).rejects.toThrow('shutting down')
      const during = new AbortController()
      const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE, signal: during.signal })
      setImmediate(() => during.abort())
      await expect(waiting).rejects.toMatchObject({ name: 'AbortError' })
    })

    it('validates its numbers', async () => {
      const s = await store()
      expect(() => s.wait(FP, 'B', { timeoutMs: Number.NaN, leaseMs: LEASE })).toThrow(/timeoutMs/)
      expect(() => s.wait(FP, 'B', { timeoutMs: 1, leaseMs: 0 })).toThrow(/leaseMs .* got 0/)
    })
  })
}
