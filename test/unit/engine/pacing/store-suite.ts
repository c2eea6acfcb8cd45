// The pacing store contract, run against every backend (store.test.ts): the same tests for the
// memory store, the SQLite file and any networked store that joins later. Every store call is
// awaited, so a store that answers later passes the same way.
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import type { ControllerState, PacingStore } from '../../../../src/main/engine/pacing/store'
import type { Permit } from '../../../../src/main/engine/pacing/scheduler'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { SEED_AIMD } from '../../../../src/main/engine/core/types'
import { FakeClock } from '../../../helpers/clock'
import { until } from '../../../helpers/until'
import { sharedBudgetTests } from './store-budget-suite'

/** Two handles on one shared state (two connections: what two processes see), and its end. */
export interface StoreHandles {
  a: PacingStore
  b: PacingStore
  close(): void | Promise<void>
}

const T0 = 1_000_000

function init(limit: number, params: Partial<typeof SEED_AIMD> = {}) {
  const controller: ControllerState = { limit, lastCutAt: null, memory: null }
  return { params: { ...SEED_AIMD, max: 20, initial: limit, ...params }, controller }
}

const limitTo = (limit: number): { controller: ControllerState } => ({
  controller: { limit, lastCutAt: null, memory: null },
})

/** Lets answers of a store that answers later arrive. */
const settle = async (rounds = 5) => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r))
}

export function pacingStoreSuite(
  name: string,
  open: (leaseMs: number) => StoreHandles | Promise<StoreHandles>,
): void {
  describe(`${name}: the pacing store contract`, () => {
    const opened: StoreHandles[] = []
    const schedulers: Scheduler[] = []
    const handles = async (leaseMs = 1000) => {
      const h = await open(leaseMs)
      opened.push(h)
      return h
    }
    const scheduler = (store: PacingStore, worker: string, clock: FakeClock, initial = 8) => {
      const s = new Scheduler({
        clock,
        store,
        worker,
        createController: controllerFactory('adaptive'),
        params: { initial, max: 12 },
      })
      schedulers.push(s)
      return s
    }

    afterEach(async () => {
      for (const s of schedulers.splice(0)) s.close()
      for (const h of opened.splice(0)) await h.close()
    })

    sharedBudgetTests(handles)

    it('the first worker on a partition nobody drives starts a session; later ones join it', async () => {
      const h = await handles(1000)
      const first = await h.a.join('p', 'w1', init(3), T0)
      expect(first.created).toBe(true)
      expect(first.record).toMatchObject({ partition: 'p', concurrency: 3, pausedUntil: 0 })
      const second = await h.b.join('p', 'w2', init(8), T0 + 10)
      expect(second.created).toBe(false)
      expect(second.record).toMatchObject({ concurrency: 3, params: { initial: 3 } })
      // Every lease lapsed: the session is over, and the next worker starts from its own params.
      const third = await h.b.join('p', 'w3', init(5), T0 + 10 + 1001)
      expect(third.created).toBe(true)
      expect(third.record).toMatchObject({ concurrency: 5, params: { initial: 5 } })
      expect(third.record.version).toBeGreaterThan(first.record.version)
      expect(await h.a.record('p')).toMatchObject({ concurrency: 5 })
      expect(await h.a.record('nobody')).toBeUndefined()
    })

    it('admission never exceeds the shared concurrency, whatever the interleaving (property)', async () => {
      const op = fc.oneof(
        fc.record({ kind: fc.constant('admit' as const), worker: fc.constantFrom(0, 1) }),
        fc.record({
          kind: fc.constant('release' as const),
          worker: fc.constantFrom(0, 1),
          limit: fc.option(fc.double({ min: 1, max: 8, noNaN: true }), { nil: undefined }),
        }),
        fc.record({ kind: fc.constant('beat' as const), worker: fc.constantFrom(0, 1) }),
        fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 50 }) }),
      )
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
          const h = await handles(1_000_000)
          const stores = [h.a, h.b]
          const workers = ['w1', 'w2']
          const held = [0, 0]
          let now = T0
          await h.a.join('p', 'w1', init(3), now)
          await h.b.join('p', 'w2', init(3), now)
          for (const o of ops) {
            if (o.kind === 'advance') {
              now += o.ms
              continue
            }
            const i = o.worker
            const store = stores[i] as PacingStore
            const worker = workers[i] as string
            if (o.kind === 'admit') {
              const a = await store.admit('p', worker, now, 0)
              const before = (held[0] as number) + (held[1] as number)
              if (a.admitted) {
                expect(before).toBeLessThan(a.record.concurrency)
                held[i]!++
                expect(a.inflight).toBe(before + 1)
              } else {
                expect(before).toBeGreaterThanOrEqual(a.record.concurrency)
              }
            } else if (o.kind === 'release' && (held[i] as number) > 0) {
              const total = (held[0] as number) + (held[1] as number)
              const r = await store.release('p', worker, {
                now,
                waiting: 0,
                outcome: 'success',
                decide: (_record, inflight) => {
                  expect(inflight).toBe(total)
                  return o.limit === undefined ? null : limitTo(o.limit)
                },
              })
              held[i]!--
              expect(r.inflight).toBe(total - 1)
              if (o.limit !== undefined) {
                expect(r.record.concurrency).toBe(Math.max(1, Math.floor(o.limit)))
              }
            } else if (o.kind === 'beat') {
              await store.heartbeat(
                worker,
                [{ partition: 'p', slots: held[i] as number, waiting: 0 }],
                now,
              )
            }
          }
          await h.close()
          opened.splice(opened.indexOf(h), 1)
        }),
        { numRuns: 60 },
      )
    })

    it("a dead worker's slots stop counting when its lease expires; a heartbeat keeps them", async () => {
      const h = await handles(1000)
      await h.a.join('p', 'w1', init(3), T0)
      await h.b.join('p', 'w2', init(3), T0)
      for (let i = 0; i < 3; i++) expect((await h.a.admit('p', 'w1', T0, 0)).admitted).toBe(true)
      expect(await h.b.admit('p', 'w2', T0 + 500, 0)).toMatchObject({
        admitted: false,
        inflight: 3,
      })
      // Renewed at +900: still counting at +1500.
      await h.a.heartbeat('w1', [{ partition: 'p', slots: 3, waiting: 0 }], T0 + 900)
      expect((await h.b.admit('p', 'w2', T0 + 1500, 0)).admitted).toBe(false)
      // No sign of life since +900: at +1901 w1's slots are free for the others...
      for (let i = 0; i < 3; i++) {
        expect((await h.b.admit('p', 'w2', T0 + 1901, 0)).admitted).toBe(true)
      }
      expect(await h.b.admit('p', 'w2', T0 + 1901, 0)).toMatchObject({ admitted: false })
      // ...and a worker that was only slow still counts its own: it cannot overshoot either.
      expect(await h.a.admit('p', 'w1', T0 + 1901, 0)).toMatchObject({
        admitted: false,
        inflight: 6,
      })
      const [view] = await h.a.partitions(T0 + 1901, 0)
      expect(view).toMatchObject({ inflight: 3, workers: 1 })
    })

    it('a heartbeat sets the slot count to what the worker holds, so a lost release cannot leak', async () => {
      const h = await handles(1000)
      await h.a.join('p', 'w1', init(2), T0)
      await h.a.admit('p', 'w1', T0, 0)
      await h.a.admit('p', 'w1', T0, 0)
      expect((await h.b.admit('p', 'w2', T0, 0)).admitted).toBe(false)
      await h.a.heartbeat('w1', [{ partition: 'p', slots: 1, waiting: 4 }], T0 + 10)
      expect(await h.b.admit('p', 'w2', T0 + 10, 0)).toMatchObject({ admitted: true, inflight: 2 })
      expect(await h.b.admit('p', 'w2', T0 + 10, 0)).toMatchObject({ othersWaiting: 4 })
    })

    it('one cut per congestion episode across workers: a throttle sent before the shared cut does not cut again', async () => {
      const h = await handles(60_000)
      const clock = new FakeClock(T0)
      const sa = scheduler(h.a, 'A', clock)
      const sb = scheduler(h.b, 'B', clock)
      const pa = await Promise.all([1, 2, 3, 4].map(() => sa.acquire('p')))
      const pb = await Promise.all([1, 2, 3, 4].map(() => sb.acquire('p')))
      const limit = async () => (await h.a.record('p'))?.controller.limit
      // Until the releases so far reached the store (a networked store answers later).
      const landed = (n: number) =>
        until(
          async () => {
            const [v] = await h.b.partitions(clock.now(), 0)
            return v && v.throttles + v.successes + v.errors >= n ? v : undefined
          },
          5000,
          2,
        )
      expect(await limit()).toBe(8)
      clock.advance(100)
      pa[0]!.release('throttled')
      await landed(1)
      expect(await limit()).toBe(4)
      // The burst's other answers, in both workers: the same episode.
      for (const p of [pb[0], pa[1], pb[1]] as Permit[]) p.release('throttled')
      await landed(4)
      expect(await limit()).toBe(4)
      expect((await h.b.record('p'))?.lastChange).toMatchObject({ from: 8, to: 4 })
      // A call sent after the cut and refused is a new episode, wherever it was sent from.
      for (const p of [pb[2], pa[2], pa[3], pb[3]] as Permit[]) p.release('ok')
      await landed(8)
      clock.advance(100)
      const late = await sb.acquire('p')
      clock.advance(100)
      late.release('throttled')
      await landed(9)
      expect(await limit()).toBe(2)
      // The other worker runs on the shared limit from its next admission on.
      const next = await sa.acquire('p')
      expect(sa.snapshot()[0]).toMatchObject({ limit: 2, concurrency: 2 })
      next.release('ok')
    })

    it("params written by one worker apply to the other's next admission", async () => {
      const h = await handles(60_000)
      const clock = new FakeClock(T0)
      const sa = scheduler(h.a, 'A', clock, 4)
      const sb = scheduler(h.b, 'B', clock, 4)
      ;(await sa.acquire('p')).release('ok')
      ;(await sb.acquire('p')).release('ok')
      sa.setParams('p', { max: 3, cooldownMs: 1234 })
      await until(async () => (await h.b.record('p'))?.params.max === 3, 5000, 2)
      expect((await h.b.record('p'))?.params).toMatchObject({ max: 3, cooldownMs: 1234 })
      const permits = await Promise.all([1, 2, 3].map(() => sb.acquire('p')))
      expect(sb.getParams('p')).toMatchObject({ max: 3, cooldownMs: 1234 })
      expect(sb.snapshot()[0]).toMatchObject({ limit: 3, concurrency: 3, inflight: 3 })
      // The cap holds across both: the fourth call waits for a slot.
      let fourth = false
      void sa.acquire('p').then((p) => {
        fourth = true
        p.release('ok')
      })
      await settle()
      expect(fourth).toBe(false)
      for (const p of permits) p.release('ok')
      await until(() => fourth || undefined, 5000, 5)
    })

    it('a pause written with a release holds every worker until it ends', async () => {
      const h = await handles(60_000)
      await h.a.join('p', 'w1', init(4), T0)
      await h.b.join('p', 'w2', init(4), T0)
      await h.a.admit('p', 'w1', T0, 0)
      const r = await h.a.release('p', 'w1', {
        now: T0 + 10,
        waiting: 0,
        outcome: 'throttle',
        decide: () => ({ pausedUntil: T0 + 500 }),
      })
      expect(r).toMatchObject({ changed: true, record: { pausedUntil: T0 + 500 } })
      expect(await h.b.admit('p', 'w2', T0 + 499, 0)).toMatchObject({ admitted: false })
      expect(await h.a.admit('p', 'w1', T0 + 499, 0)).toMatchObject({ admitted: false })
      // A shorter pause never shortens the one in force.
      await h.b.update('p', T0 + 20, () => ({ pausedUntil: T0 + 100 }))
      expect((await h.a.record('p'))?.pausedUntil).toBe(T0 + 500)
      expect((await h.b.admit('p', 'w2', T0 + 500, 0)).admitted).toBe(true)
    })

    it("the paces one worker learned, written with its release, are in the other's next admission", async () => {
      const h = await handles(60_000)
      await h.a.join('p', 'w1', init(4), T0)
      await h.b.join('p', 'w2', init(4), T0)
      await h.a.admit('p', 'w1', T0, 0)
      const send = { burstMs: 0, scale: 0.8, scaleAt: T0 + 10, cutAt: T0 + 10 }
      await h.a.release('p', 'w1', {
        now: T0 + 10,
        waiting: 0,
        outcome: 'throttle',
        decide: () => ({ learned: { send } }),
      })
      expect((await h.b.admit('p', 'w2', T0 + 20, 0)).record.learned).toEqual({ send })
      // Kept by the changes that do not touch it (a limit, a pause); a new one replaces it.
      await h.b.update('p', T0 + 30, () => ({ pausedUntil: T0 + 40 }))
      expect((await h.a.record('p'))?.learned).toEqual({ send })
      const cut = { ...send, scale: 0.64, cutAt: T0 + 50 }
      await h.b.update('p', T0 + 50, () => ({ learned: { send: cut } }))
      expect((await h.a.admit('p', 'w1', T0 + 60, 0)).record.learned).toEqual({ send: cut })
    })

    it('while another worker waits, a worker holding its fair share is refused', async () => {
      const h = await handles(60_000)
      await h.a.join('p', 'w1', init(6), T0)
      await h.b.join('p', 'w2', init(6), T0)
      for (let i = 0; i < 5; i++) expect((await h.a.admit('p', 'w1', T0, 10)).admitted).toBe(true)
      await h.b.heartbeat('w2', [{ partition: 'p', slots: 0, waiting: 7 }], T0)
      // w1 holds 5 of 6 while w2 waits: its share is 3, the free slot is w2's.
      expect(await h.a.admit('p', 'w1', T0, 10)).toMatchObject({
        admitted: false,
        othersWaiting: 7,
      })
      expect((await h.b.admit('p', 'w2', T0, 6)).admitted).toBe(true)
      // Nobody else waits: no share applies, the bound is the concurrency alone.
      await h.b.heartbeat('w2', [{ partition: 'p', slots: 1, waiting: 0 }], T0)
      await h.a.release('p', 'w1', { now: T0, waiting: 0, outcome: 'success' })
      expect((await h.a.admit('p', 'w1', T0, 0)).admitted).toBe(true)
    })

    it('counts outcomes per partition over every worker, and lists live and recent partitions', async () => {
      const h = await handles(1000)
      await h.a.join('p', 'w1', init(4), T0)
      await h.b.join('p', 'w2', init(4), T0 + 5)
      await h.a.join('q', 'w1', init(2), T0 + 10)
      const outcomes = ['success', 'success', 'throttle', 'error'] as const
      for (const [i, outcome] of outcomes.entries()) {
        const store = i % 2 === 0 ? h.a : h.b
        const worker = i % 2 === 0 ? 'w1' : 'w2'
        await store.admit('p', worker, T0 + 20, 0)
        await store.release('p', worker, { now: T0 + 20, waiting: 2, outcome })
      }
      // Waiting is what each worker last said: w1 2 at its release, w2 0 at this admission.
      await h.b.admit('p', 'w2', T0 + 20, 0)
      const views = await h.a.partitions(T0 + 30, 0)
      expect(views.map((v) => v.record.partition)).toEqual(['p', 'q'])
      expect(views[0]).toMatchObject({
        inflight: 1,
        waiting: 2,
        throttles: 1,
        successes: 2,
        errors: 1,
        workers: 2,
      })
      // The last leases ended at +1010 (q) and +1020 (p): listed while recent, then not.
      expect((await h.b.partitions(T0 + 1500, 1000)).map((v) => v.record.partition)).toEqual([
        'p',
        'q',
      ])
      expect(await h.b.partitions(T0 + 1100, 85)).toMatchObject([
        { record: { partition: 'p' }, workers: 0, inflight: 0, activeUntil: T0 + 1020 },
      ])
      expect(await h.b.partitions(T0 + 5000, 1000)).toEqual([])
    })

    it('an operator update applies its decision to the current record, once', async () => {
      const h = await handles(60_000)
      await h.a.join('p', 'w1', init(4), T0)
      const seen: number[] = []
      const updated = await h.b.update('p', T0 + 5, (record) => {
        seen.push(record.concurrency)
        return { params: { ...record.params, max: 2 }, ...limitTo(2) }
      })
      expect(seen).toEqual([4])
      expect(updated).toMatchObject({
        changed: true,
        record: { concurrency: 2, params: { max: 2 } },
      })
      expect(await h.b.update('p', T0 + 6, () => null)).toMatchObject({ changed: false })
      expect(await h.b.update('nobody', T0, () => limitTo(1))).toBeUndefined()
    })
  })
}
