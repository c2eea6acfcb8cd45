// The claim store contract, run against every backend: SQLite (claims.test.ts) and Redis
// (claims-redis.test.ts). Every store call is awaited, so a store that answers later passes the
// same way; `row` reads the claim as the backend keeps it (state, owner, epoch, lease, result).
import { afterEach, describe, expect, it } from 'vitest'
import { FakeClock } from '../../../helpers/clock'
import { claimLeaseSuite } from './claims-suite-leases'
import { FP, LEASE, type ClaimHandles, type ClaimStoreOptions } from './claims-suite-parts'

export type { ClaimHandles, ClaimRow, ClaimStoreOptions } from './claims-suite-parts'

export function claimStoreSuite(name: string, open: () => Promise<ClaimHandles>): void {
  describe(`${name}: the claim store contract`, () => {
    let h: ClaimHandles
    let clock: FakeClock
    const opened: ClaimHandles[] = []
    const store = async (opts: Omit<ClaimStoreOptions, 'clock'> = {}) => {
      clock ??= new FakeClock()
      if (!h) {
        h = await open()
        opened.push(h)
      }
      return h.store({ clock, ...opts })
    }
    const row = (fp = FP) => h.row(fp)

    afterEach(async () => {
      for (const o of opened.splice(0)) await o.close()
      h = undefined as unknown as ClaimHandles
      clock = undefined as unknown as FakeClock
    })

    describe('claim', () => {
      it('the first claim owns the fingerprint at epoch 1', async () => {
        const s = await store()
        expect(await s.claim(FP, 'A', LEASE)).toEqual({ kind: 'owned', epoch: 1, tookOver: false })
        expect(await row()).toMatchObject({
          state: 'running',
          owner: 'A',
          epoch: 1,
          lease_until: clock.t + LEASE,
        })
      })

      it('a second claim while the lease runs is busy, up to and including lease_until', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        const leaseUntil = clock.t + LEASE
        expect(await s.claim(FP, 'B', LEASE)).toEqual({
          kind: 'busy',
          owner: 'A',
          epoch: 1,
          leaseUntil,
        })
        clock.advance(LEASE)
        expect((await s.claim(FP, 'B', LEASE)).kind).toBe('busy')
        clock.advance(1)
        expect((await s.claim(FP, 'B', LEASE)).kind).toBe('owned')
      })

      it('after completion every claim gets the stored result', async () => {
        const s = await store()
        const completedAt = clock.t + 5
        await s.claim(FP, 'A', LEASE)
        clock.advance(5)
        expect(await s.complete(FP, 1, '{"text":"hi"}', 'succeeded', 1_234)).toBe(true)
        const expected = {
          result: '{"text":"hi"}',
          status: 'succeeded',
          owner: 'A',
          epoch: 1,
          completedAt,
          // What the execution cost, for the reuse's "saved".
          costMicros: 1_234,
        }
        expect(await s.claim(FP, 'B', LEASE)).toMatchObject({ kind: 'completed', result: expected })
        expect(await s.claim(FP, 'A', LEASE)).toMatchObject({ kind: 'completed', result: expected })
        expect(await s.getResult(FP)).toMatchObject(expected)
      })

      it('caches deterministic failures as results too', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        await s.complete(FP, 1, '{"error":"400 bad request"}', 'failed')
        expect(await s.claim(FP, 'B', LEASE)).toMatchObject({
          kind: 'completed',
          result: { status: 'failed', costMicros: null },
        })
      })

      it('takes over an expired lease by compare-and-set; the stale owner is fenced out', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        clock.advance(LEASE + 1)
        expect(await s.claim(FP, 'B', LEASE)).toEqual({
          kind: 'owned',
          epoch: 2,
          tookOver: true,
          previousOwner: 'A',
          previousEpoch: 1,
        })
        expect(await s.renew(FP, 1, LEASE)).toBe(false)
        expect(await s.complete(FP, 1, '"from A"', 'succeeded')).toBe(false)
        expect(await s.release(FP, 1)).toBe(false)
        expect(await row()).toMatchObject({ state: 'running', owner: 'B', epoch: 2, result: null })
        expect(await s.complete(FP, 2, '"from B"', 'succeeded')).toBe(true)
        expect(await s.complete(FP, 1, '"from A"', 'succeeded')).toBe(false)
        expect(await s.getResult(FP)).toMatchObject({ result: '"from B"', owner: 'B', epoch: 2 })
      })

      it('completion is fenced by epoch, not by the clock: a late owner nobody replaced may finish', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        clock.advance(LEASE * 3)
        expect(await s.renew(FP, 1, LEASE)).toBe(true)
        expect(await s.complete(FP, 1, '"late but alone"', 'succeeded')).toBe(true)
      })

      it('completes once: a second completion of the same epoch writes nothing', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        expect(await s.complete(FP, 1, '"first"', 'succeeded')).toBe(true)
        expect(await s.complete(FP, 1, '"second"', 'failed')).toBe(false)
        expect(await s.complete(FP, 7, '"other"', 'succeeded')).toBe(false)
        expect(await s.getResult(FP)).toMatchObject({ result: '"first"', status: 'succeeded' })
      })

      it('release lets the next claim own it with a higher epoch', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        expect(await s.release(FP, 2)).toBe(false)
        expect(await s.release(FP, 1)).toBe(true)
        expect(await row()).toMatchObject({ state: 'released', epoch: 1 })
        expect(await s.release(FP, 1)).toBe(false)
        expect(await s.claim(FP, 'B', LEASE)).toEqual({ kind: 'owned', epoch: 2, tookOver: false })
        expect(await s.complete(FP, 1, '"A"', 'succeeded')).toBe(false)
        expect(await s.complete(FP, 2, '"B"', 'succeeded')).toBe(true)
        expect(await s.release(FP, 2)).toBe(false)
      })

      it('re-claims a result past retention, and only then', async () => {
        const s = await store({ resultTtlMs: 1000 })
        await s.claim(FP, 'A', LEASE)
        await s.complete(FP, 1, '"old"', 'succeeded')
        clock.advance(999)
        expect((await s.claim(FP, 'B', LEASE)).kind).toBe('completed')
        expect(await s.getResult(FP)).toBeDefined()
        clock.advance(1)
        expect(await s.getResult(FP)).toBeUndefined()
        expect(await s.claim(FP, 'B', LEASE)).toEqual({ kind: 'owned', epoch: 2, tookOver: false })
        expect(await row()).toMatchObject({
          state: 'running',
          owner: 'B',
          epoch: 2,
          status: null,
          result: null,
        })
        expect((await s.claim(FP, 'C', LEASE)).kind).toBe('busy')
      })

      it('keeps results forever with resultTtlMs 0', async () => {
        const s = await store({ resultTtlMs: 0 })
        await s.claim(FP, 'A', LEASE)
        await s.complete(FP, 1, '"kept"', 'succeeded')
        clock.advance(10 * 365 * 86_400_000)
        expect((await s.claim(FP, 'B', LEASE)).kind).toBe('completed')
      })

      it('applies a retention changed at runtime at once', async () => {
        const s = await store()
        expect(s.resultTtlMs).toBe(86_400_000)
        await s.claim(FP, 'A', LEASE)
        await s.complete(FP, 1, '"r"', 'succeeded')
        clock.advance(60_000)
        expect((await s.claim(FP, 'B', LEASE)).kind).toBe('completed')
        s.resultTtlMs = 900_000 / 20 // 45 s, shorter than the minute that passed
        expect((await s.claim(FP, 'B', LEASE)).kind).toBe('owned')
        expect(() => (s.resultTtlMs = -1)).toThrow(
          /resultTtlMs must be an integer >= 0 \(ms\), got -1/,
        )
      })

      it('never moves an epoch back and keeps one claim per fingerprint', async () => {
        const s = await store({ resultTtlMs: 100 })
        const epochs: number[] = []
        const own = async (owner: string) => {
          const a = await s.claim(FP, owner, LEASE)
          if (a.kind !== 'owned') throw new Error(`expected owned, got ${a.kind}`)
          epochs.push(a.epoch)
          return a.epoch
        }
        await s.release(FP, await own('A'))
        await own('B')
        clock.advance(LEASE + 1)
        await s.complete(FP, await own('C'), '"c"', 'succeeded')
        clock.advance(100)
        await own('D')
        expect(epochs).toEqual([1, 2, 3, 4])
        expect(await h.count()).toBe(1)
      })
    })

    claimLeaseSuite({ store, row, handles: () => h, clock: () => clock })

    describe('options', () => {
      it('rejects bad numbers, naming the value', async () => {
        await store()
        const make = (opts: Omit<ClaimStoreOptions, 'clock'>) => () => h.store({ clock, ...opts })
        expect(make({ pollMinMs: 0 })).toThrow(/pollMinMs must be an integer >= 1 \(ms\), got 0/)
        expect(make({ pollMinMs: 50, pollMaxMs: 10 })).toThrow(/pollMaxMs .* >= 50 .* got 10/)
        expect(make({ resultTtlMs: 1.5 })).toThrow(/got 1.5/)
        const s = await store()
        await expect(async () => s.claim(FP, 'A', -5)).rejects.toThrow(/leaseMs .* got -5/)
      })
    })

    describe('truncated results', () => {
      it('are kept but not handed out: the next claim executes again, at a new epoch', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        expect(await s.complete(FP, 1, '{"text":"cut"}', 'truncated', 12)).toBe(true)
        expect(await row()).toMatchObject({ state: 'completed', status: 'truncated' })
        expect(await s.getResult(FP)).toBeUndefined()
        expect(await s.claim(FP, 'B', LEASE)).toEqual({ kind: 'owned', epoch: 2, tookOver: false })
      })

      it('a waiter on a truncated completion is told to claim again', async () => {
        const s = await store()
        await s.claim(FP, 'A', LEASE)
        const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
        await s.complete(FP, 1, '{"text":"cut"}', 'truncated')
        await expect(waiting).resolves.toEqual({ kind: 'released' })
      })

      it('are reused like any other when the operator accepts them', async () => {
        const s = await store({ acceptTruncated: true })
        await s.claim(FP, 'A', LEASE)
        await s.complete(FP, 1, '{"text":"cut"}', 'truncated', 12)
        expect(await s.claim(FP, 'B', LEASE)).toMatchObject({
          kind: 'completed',
          result: { status: 'truncated', costMicros: 12 },
        })
        s.acceptTruncated = false
        expect(await s.getResult(FP)).toBeUndefined()
      })
    })
  })
}
