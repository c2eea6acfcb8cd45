// Lean admission (store-sqlite-lean.ts) on two connections to one file, what two processes see:
// a worker alone leases the partition in one write and admits from memory; the block never lets
// the two together past the shared concurrency; it goes back when the other worker shows demand,
// when the lessee is idle, when its scheduler closes, and when its lease runs out.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { SEED_AIMD } from '../../../../src/main/engine/core/types'
import type { BudgetCost } from '../../../../src/main/engine/pacing/shared-budget'
import { mergeBudget } from '../../../../src/main/engine/pacing/shared-budget'
import type { ControllerState } from '../../../../src/main/engine/pacing/store'
import { SqlitePacingStore } from '../../../../src/main/engine/pacing/store-sqlite'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { FakeClock } from '../../../helpers/clock'

const T0 = 1_000_000
const dirs: string[] = []
const dbs: Database.Database[] = []

afterEach(() => {
  for (const db of dbs.splice(0)) db.close()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Two lean stores on two connections to one file, and a third connection to look at it. */
function open(leaseMs = 1000) {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-lean-'))
  dirs.push(dir)
  const file = path.join(dir, 'pacer.db')
  const [dbA, dbB, look] = [openDatabase(file), openDatabase(file), openDatabase(file)]
  dbs.push(dbA, dbB, look)
  const writes = look.prepare('PRAGMA data_version').pluck()
  return {
    a: new SqlitePacingStore({ db: dbA, leaseMs, lean: true }),
    b: new SqlitePacingStore({ db: dbB, leaseMs, lean: true }),
    /** Moves whenever either store commits a write. */
    writes: () => writes.get() as number,
    slots: (worker: string) =>
      (
        look
          .prepare('SELECT slots FROM pacing_workers WHERE partition = ? AND worker = ?')
          .get('p', worker) as { slots: number } | undefined
      )?.slots,
    budgetText: () =>
      (
        look.prepare("SELECT budget FROM pacing_partitions WHERE partition = 'p'").get() as {
          budget: string | null
        }
      ).budget,
  }
}

function init(limit: number) {
  const controller: ControllerState = { limit, lastCutAt: null, memory: null }
  return { params: { ...SEED_AIMD, max: 20, initial: limit }, controller }
}

const ok = { now: T0, waiting: 1, outcome: 'success' as const }

describe('SqlitePacingStore, lean: a worker alone leases its partition in blocks', () => {
  it('alone, it takes every slot in one write and admits and releases without writing', () => {
    const h = open()
    h.a.join('p', 'w1', init(4), T0)
    const before = h.writes()
    expect(h.a.admit('p', 'w1', T0, 3)).toMatchObject({ admitted: true, inflight: 1 })
    const taken = h.writes()
    expect(taken).toBeGreaterThan(before)
    expect(h.slots('w1')).toBe(4)
    for (let i = 0; i < 3; i++) expect(h.a.admit('p', 'w1', T0, 2 - i).admitted).toBe(true)
    expect(h.a.admit('p', 'w1', T0, 1)).toMatchObject({ admitted: false, inflight: 4 })
    // A release that hands the slot on, and three more: not one write until the last leaves it idle.
    expect(h.a.release('p', 'w1', { ...ok, handoff: true })).toMatchObject({ handedOff: true })
    for (let i = 0; i < 3; i++) h.a.release('p', 'w1', ok)
    expect(h.writes()).toBe(taken)
    expect(h.a.partitions(T0, 0)[0]).toMatchObject({ inflight: 1, successes: 4 })
    h.a.release('p', 'w1', { ...ok, waiting: 0 })
    // Idle: the block went back, with its counts.
    expect(h.writes()).toBeGreaterThan(taken)
    expect(h.slots('w1')).toBe(0)
    expect(h.b.partitions(T0, 0)[0]).toMatchObject({ inflight: 0, successes: 5 })
  })

  it('another worker showing demand gets the block back at the lessee next store call', () => {
    const h = open()
    h.a.join('p', 'w1', init(4), T0)
    h.b.join('p', 'w2', init(4), T0)
    expect(h.a.admit('p', 'w1', T0, 1).admitted).toBe(true)
    expect(h.a.admit('p', 'w1', T0, 0).admitted).toBe(true)
    // Two in flight, but the block holds all four: the other worker is refused...
    expect(h.b.admit('p', 'w2', T0, 1)).toMatchObject({ admitted: false, inflight: 4 })
    // ...until its heartbeat says it waits: the lessee's next call hands back the unused two.
    h.b.heartbeat('w2', [{ partition: 'p', slots: 0, waiting: 1 }], T0)
    h.a.release('p', 'w1', ok)
    expect(h.slots('w1')).toBe(1)
    expect(h.b.admit('p', 'w2', T0 + 1, 0)).toMatchObject({ admitted: true, inflight: 2 })
    // Shared again: each call of the former lessee is a write every worker sees.
    expect(h.a.admit('p', 'w1', T0 + 2, 0)).toMatchObject({ admitted: true, inflight: 3 })
    expect(h.slots('w1')).toBe(2)
  })

  it('a lessee that stops answering (killed) gives its block back when its lease runs out', () => {
    const h = open(500)
    h.a.join('p', 'w1', init(3), T0)
    h.b.join('p', 'w2', init(3), T0)
    expect(h.a.admit('p', 'w1', T0, 0).admitted).toBe(true)
    expect(h.slots('w1')).toBe(3)
    expect(h.b.admit('p', 'w2', T0 + 500, 0).admitted).toBe(false)
    for (let i = 0; i < 3; i++) expect(h.b.admit('p', 'w2', T0 + 501, 0).admitted).toBe(true)
    expect(h.b.admit('p', 'w2', T0 + 501, 0).admitted).toBe(false)
  })

  it('a scheduler that closes hands back the unused slots; its calls in flight keep theirs', async () => {
    const h = open()
    const clock = new FakeClock(T0)
    const s = new Scheduler({ clock, store: h.a, worker: 'w1', params: { initial: 5, max: 5 } })
    await s.acquire('p')
    await s.acquire('p')
    expect(h.slots('w1')).toBe(5)
    s.close()
    expect(h.slots('w1')).toBe(2)
  })

  it('the announced budget is kept in memory by the lessee and written when it hands back', () => {
    const h = open()
    const cost: BudgetCost = { requests: 1, tokens: 100, 'input-tokens': 80, 'output-tokens': 20 }
    const reading = { limit: 10, ratePerMs: 0, refilled: 10 }
    h.a.join('p', 'w1', init(4), T0)
    const first = h.a.admit('p', 'w1', T0, 1, cost)
    expect(first).toMatchObject({ admitted: true })
    h.a.admit('p', 'w1', T0, 0, cost)
    // The first answer announces 10 requests: from then on every admission is charged.
    h.a.release('p', 'w1', {
      ...ok,
      budget: { ticket: first.ticket!, reading: { requests: reading } },
    })
    // (The second call, admitted before the reading, is in neither it nor the count since.)
    for (let i = 0; i < 3; i++) expect(h.a.admit('p', 'w1', T0, 1, cost).admitted).toBe(true)
    expect(h.a.budget('p').d.requests?.v).toBe(10 - 3)
    // Not written yet: the row holds nothing the other workers could spend twice.
    expect(h.budgetText()).toBeNull()
    h.a.leave('p', 'w1')
    expect(h.b.budget('p').d.requests?.v).toBe(7)
    expect(h.slots('w1')).toBe(4)
  })

  it('admission never exceeds the shared concurrency, whatever the interleaving (property)', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('admit' as const), worker: fc.constantFrom(0, 1) }),
      fc.record({ kind: fc.constant('release' as const), worker: fc.constantFrom(0, 1) }),
      fc.record({ kind: fc.constant('beat' as const), worker: fc.constantFrom(0, 1) }),
    )
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
        const h = open(1_000_000)
        const stores = [h.a, h.b]
        const workers = ['w1', 'w2']
        const held = [0, 0]
        h.a.join('p', 'w1', init(3), T0)
        h.b.join('p', 'w2', init(3), T0)
        for (const o of ops) {
          const i = o.worker
          const store = stores[i]!
          const worker = workers[i]!
          if (o.kind === 'admit') {
            const before = held[0]! + held[1]!
            if (store.admit('p', worker, T0, 1).admitted) {
              expect(before).toBeLessThan(3)
              held[i]!++
            }
          } else if (o.kind === 'release' && held[i]! > 0) {
            store.release('p', worker, { now: T0, waiting: 1, outcome: 'success' })
            held[i]!--
          } else if (o.kind === 'beat') {
            store.heartbeat(worker, [{ partition: 'p', slots: held[i]!, waiting: 1 }], T0)
          }
        }
        // Every worker's row together never says fewer slots than the calls in flight.
        expect((h.slots('w1') ?? 0) + (h.slots('w2') ?? 0)).toBeGreaterThanOrEqual(
          held[0]! + held[1]!,
        )
      }),
      { numRuns: 40 },
    )
  })
})

describe('mergeBudget', () => {
  it("counts the other writers' admissions once more against the lessee's buckets", () => {
    const bucket = { l: 10, p: 0, v: 8, t: 0, q: 1 }
    const base = { s: 2, c: { requests: 2 }, d: { requests: bucket } }
    const mine = { s: 5, c: { requests: 5 }, d: { requests: { ...bucket, v: 5 } } }
    const theirs = { s: 3, c: { requests: 3 }, d: { requests: { ...bucket, v: 7 } } }
    expect(mergeBudget(base, mine, theirs)).toEqual({
      s: 6,
      c: { requests: 6 },
      d: { requests: { ...bucket, v: 4 } },
    })
  })
})
