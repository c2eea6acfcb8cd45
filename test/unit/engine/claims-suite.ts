// The claim store contract, run against every backend: SQLite (claims.test.ts) and Redis
// (claims-redis.test.ts). Every store call is awaited, so a store that answers later passes the
// same way; `row` reads the claim as the backend keeps it (state, owner, epoch, lease, result).
import { afterEach, describe, expect, it } from 'vitest'
import { fingerprint } from '../../../src/main/engine/fingerprint'
import type { AsyncClaimStore, Clock } from '../../../src/main/engine/types'
import { systemClock } from '../../../src/main/engine/types'
import { FakeClock } from '../../helpers/clock'

export interface ClaimStoreOptions {
  clock: Clock
  resultTtlMs?: number
  pollMinMs?: number
  pollMaxMs?: number
  acceptTruncated?: boolean
}

export interface ClaimRow {
  state: string
  status: string | null
  owner: string
  epoch: number
  lease_until: number
  result: string | null
}

/** One shared state; stores on its first connection, or on a second one (another process). */
export interface ClaimHandles {
  store(opts: ClaimStoreOptions): AsyncClaimStore
  elsewhere(opts: ClaimStoreOptions): AsyncClaimStore
  row(fp: string): Promise<ClaimRow | undefined>
  /** Claims kept, one per fingerprint ever claimed. */
  count(): Promise<number>
  close(): void | Promise<void>
}

const LEASE = 10_000
const FP = fingerprint('summarize', { text: 'hello' })

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
        const waiting = here.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
        setTimeout(() => void elsewhere.complete(FP, 1, '"from afar"', 'succeeded'), 20)
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
        expect(() => s.wait(FP, 'B', { timeoutMs: Number.NaN, leaseMs: LEASE })).toThrow(
          /timeoutMs/,
        )
        expect(() => s.wait(FP, 'B', { timeoutMs: 1, leaseMs: 0 })).toThrow(/leaseMs .* got 0/)
      })
    })

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
