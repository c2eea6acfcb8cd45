// The reservation arithmetic of the per-run cap, on real SQLite: two connections to one file stand
// for two processes, and random interleavings of reservations, settlements (at or below what was
// reserved), failures, worker deaths and raised caps never let spent + reserved pass the cap.
import type Database from 'better-sqlite3'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { SpendBudget } from '../../../../src/main/engine/pacing/spend-budget'
import { fakeClock } from '../../../helpers/clock'
import {
  KEPT,
  SCOPE,
  TASKS,
  WORKERS,
  books,
  open,
  reserveAs,
  settleWithRow,
  setup,
} from './spend-fixtures'

afterEach(() => {
  for (const db of open.splice(0)) db.close()
})

type Op =
  | { op: 'reserve'; via: number; task: number; micros: number }
  | { op: 'settle'; pick: number; share: number }
  | { op: 'fail'; pick: number }
  | { op: 'die'; worker: number }
  | { op: 'raise'; by: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('reserve' as const),
      via: fc.integer({ min: 0, max: 1 }),
      task: fc.integer({ min: 0, max: TASKS - 1 }),
      micros: fc.integer({ min: 0, max: 5_000 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('settle' as const),
      pick: fc.nat(),
      share: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fail' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('die' as const),
      worker: fc.integer({ min: 0, max: 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('raise' as const),
      by: fc.integer({ min: 0, max: 3000 }),
    }),
  },
)

describe('SpendBudget: reserve before sending, settle to the real cost', () => {
  it('spent + reserved never passes the cap; once all is settled, reserved = 0 and spent = what was settled', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20_000 }),
        fc.array(opArb, { maxLength: 80 }),
        (cap, ops) => {
          const { db, budgets } = setup(cap)
          const outstanding: { id: number; micros: number; worker: string }[] = []
          let settled = 0
          const check = () => {
            const b = books(db)
            expect(b.spent + b.reserved).toBeLessThanOrEqual(b.cap)
            expect(b.spent).toBe(settled)
          }
          for (const o of ops) {
            if (o.op === 'reserve') {
              const { r, worker } = reserveAs(db, budgets[o.via]!, o.task, o.micros)
              const { spent, reserved } = books(db)
              if (r.kind === 'reserved') outstanding.push({ id: r.id, micros: o.micros, worker })
              // Refused only when it did not fit; told to wait only while others hold some.
              if (r.kind === 'stop') expect(spent + o.micros).toBeGreaterThan(cap)
              if (r.kind === 'wait') expect(reserved).toBeGreaterThan(0)
              expect(r.kind).not.toBe('uncapped')
            } else if (o.op === 'settle' || o.op === 'fail') {
              if (outstanding.length === 0) continue
              const [res] = outstanding.splice(o.pick % outstanding.length, 1)
              const cost = o.op === 'fail' ? 0 : Math.floor(res!.micros * o.share)
              budgets[0]!.settle(SCOPE, res!.id, cost)
              settled += cost
            } else if (o.op === 'die') {
              // The lease sweep requeues a dead worker's tasks; its reservations are stale then.
              db.prepare('UPDATE task_queue SET status = 0, worker = NULL WHERE worker = ?').run(
                WORKERS[o.worker],
              )
              budgets[1]!.sweep()
              for (let i = outstanding.length - 1; i >= 0; i--) {
                if (outstanding[i]!.worker === WORKERS[o.worker]) outstanding.splice(i, 1)
              }
              // Picked again by a live worker (so later reservations have a running task).
              db.prepare('UPDATE task_queue SET status = 1, worker = ? WHERE status = 0').run(
                WORKERS[1 - o.worker],
              )
            } else {
              cap += o.by
              db.prepare("UPDATE batches SET budget_micros = ? WHERE id = 'b1'").run(cap)
            }
            check()
          }
          for (const res of outstanding.splice(0)) budgets[1]!.release(res.id)
          const end = books(db)
          expect(end.reserved).toBe(0)
          expect(end.spent).toBe(settled)
          for (const d of open.splice(0)) d.close()
        },
      ),
      { numRuns: 150 },
    )
  })

  it('a reservation that fits is taken whole, one that cannot is refused, one that may waits', () => {
    const { budgets, db } = setup(1000)
    const [a] = budgets
    expect(a!.reserve({ ...SCOPE, taskId: 1, worker: 'w0', micros: 600 })).toMatchObject({
      kind: 'reserved',
    })
    expect(a!.reserve({ ...SCOPE, taskId: 2, worker: 'w1', micros: 600 })).toEqual({
      kind: 'wait',
    })
    expect(a!.reserve({ ...SCOPE, taskId: 2, worker: 'w1', micros: 1001 })).toMatchObject({
      kind: 'stop',
      reason: expect.stringMatching(/^held by budget: the run's cap is \$0\.001/) as string,
    })
    expect(books(db)).toEqual({ cap: 1000, spent: 0, reserved: 600 })
  })

  it('prices the worst case at the dearer input rate and the output cap, and refuses an unpriced model', () => {
    const { budgets } = setup(1000)
    const messages = [{ role: 'user' as const, content: 'héllo' }]
    const bytes = Buffer.byteLength(JSON.stringify(messages))
    // claude-sonnet-4-5: $3 input, $3.75 cache write, $15 output per 1M tokens.
    const worst = budgets[0]!.worstCase('anthropic', 'claude-sonnet-4-5', messages, 100)
    expect(worst).toEqual({
      micros: Math.round(bytes * 3.75 + 100 * 15) + 1,
      outputTokens: 100,
      defaultedOutput: false,
    })
    expect(
      budgets[0]!.worstCase('anthropic', 'claude-sonnet-4-5', messages, undefined),
    ).toMatchObject({
      outputTokens: 4096,
      defaultedOutput: true,
    })
    expect(budgets[0]!.worstCase('openai-compatible', 'local', messages, 10)).toEqual({
      unpriced: expect.stringMatching(/^openai-compatible\/local has no price/) as string,
    })
  })
})

/** What a kept cap's current period holds: spent, in doubt and reserved (holds of live rows). */
function capBooks(db: Database.Database, cap: number) {
  return db
    .prepare(
      `SELECT c.cap_micros AS cap,
         COALESCE((SELECT spent_micros FROM spend_cap_periods p WHERE p.cap = c.id), 0) AS spent,
         COALESCE((SELECT presumed_micros FROM spend_cap_periods p WHERE p.cap = c.id), 0) AS doubt,
         (SELECT COALESCE(SUM(micros), 0) FROM budget_holds h WHERE h.cap = c.id) AS reserved
       FROM spend_caps c WHERE c.id = ?`,
    )
    .get(cap) as { cap: number; spent: number; doubt: number; reserved: number }
}

describe('SpendBudget: the check before each call, from the caps as last read', () => {
  it('sees a cap set since by another connection or another SpendBudget, and forgets one rolled back', () => {
    const { db, budgets } = setup(null)
    const [mine, theirs] = budgets as [SpendBudget, SpendBudget]
    const typeCap = { ...KEPT, taskType: 'classify' }
    expect(mine.applies(SCOPE)).toBe(false)
    // Another process (connection) commits a cap: the next check sees it, and its removal.
    const id = theirs.setScopedCap(typeCap, 1_000_000)
    expect(mine.applies(SCOPE)).toBe(true)
    expect(mine.applies({ ...SCOPE, taskType: 'translate' })).toBe(false)
    theirs.removeScopedCap(id)
    expect(mine.applies(SCOPE)).toBe(false)
    // Another SpendBudget on the same connection sets the batch's cap: seen, and charged.
    const neighbour = new SpendBudget({ db, prices: new Prices(), clock: fakeClock() })
    neighbour.setCap('b1', 5_000_000)
    expect(mine.capOf('b1')).toBe(5_000_000)
    mine.settle(SCOPE, null, 7)
    expect(books(db).spent).toBe(7)
    neighbour.setCap('b1', null)
    expect(mine.applies(SCOPE)).toBe(false)
    // A cap written in a transaction that is then lost: read meanwhile, forgotten after.
    const rollbacks: (() => void)[] = []
    const writes = {
      run: <T>(write: () => T) => write(),
      durable: () => Promise.resolve(),
      commit: () => {},
      onRollback: (listener: () => void) => rollbacks.push(listener),
    }
    const scoped = new SpendBudget({ db, prices: new Prices(), clock: fakeClock(), writes })
    db.exec('BEGIN IMMEDIATE')
    scoped.setScopedCap(typeCap, 1_000_000)
    expect(mine.applies(SCOPE)).toBe(true)
    db.exec('ROLLBACK')
    for (const listener of rollbacks) listener()
    expect(mine.applies(SCOPE)).toBe(false)
  })
})

describe('SpendBudget: kept caps (per task type, model, day) across two connections', () => {
  it('spent + in doubt + reserved never passes any cap; once settled, reserved = 0 and spent = what was settled', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.array(opArb, { maxLength: 80 }),
        fc.array(fc.boolean(), { minLength: 80, maxLength: 80 }),
        (dayCap, typeCap, ops, sentFlags) => {
          const { db, dbs, budgets, clock } = setup(null)
          const caps = [
            budgets[0]!.setScopedCap({ ...KEPT, period: 'day' }, dayCap),
            budgets[1]!.setScopedCap({ ...KEPT, taskType: 'classify' }, typeCap),
          ]
          // Another model's cap: never applies to these calls.
          budgets[0]!.setScopedCap({ ...KEPT, provider: 'openai', model: 'gpt-4o' }, 0)
          const outstanding: { id: number; micros: number; worker: string }[] = []
          let settled = 0
          let doubt = 0
          const check = () => {
            for (const id of caps) {
              const b = capBooks(db, id)
              expect(b.spent + b.doubt + b.reserved).toBeLessThanOrEqual(b.cap)
              expect(b.spent).toBe(settled)
              expect(b.doubt).toBe(doubt)
            }
          }
          ops.forEach((o, i) => {
            if (o.op === 'reserve') {
              const { r, worker } = reserveAs(db, budgets[o.via]!, o.task, o.micros)
              expect(r.kind).not.toBe('uncapped')
              if (r.kind === 'reserved') {
                outstanding.push({ id: r.id, micros: o.micros, worker })
                if (sentFlags[i]) budgets[o.via]!.markSent(r.id)
              }
              if (r.kind === 'stop') {
                const over = caps.some((c) => {
                  const b = capBooks(db, c)
                  return b.spent + b.doubt + o.micros > b.cap
                })
                expect(over).toBe(true)
              }
            } else if (o.op === 'settle' || o.op === 'fail') {
              if (outstanding.length === 0) return
              const [res] = outstanding.splice(o.pick % outstanding.length, 1)
              const cost = o.op === 'fail' ? 0 : Math.floor(res!.micros * o.share)
              settleWithRow(dbs[1]!, budgets[1]!, clock.now(), res!.id, cost)
              settled += cost
            } else if (o.op === 'die') {
              const sent = db
                .prepare(
                  'SELECT COALESCE(SUM(micros), 0) FROM budget_reservations WHERE worker = ? AND sent = 1',
                )
                .pluck()
                .get(WORKERS[o.worker]) as number
              db.prepare('UPDATE task_queue SET status = 0, worker = NULL WHERE worker = ?').run(
                WORKERS[o.worker],
              )
              budgets[1]!.sweep()
              // What it had sent may have been billed: counted, not returned.
              doubt += sent
              for (let k = outstanding.length - 1; k >= 0; k--) {
                if (outstanding[k]!.worker === WORKERS[o.worker]) outstanding.splice(k, 1)
              }
              db.prepare('UPDATE task_queue SET status = 1, worker = ? WHERE status = 0').run(
                WORKERS[1 - o.worker],
              )
            } else {
              // Raised from another connection, as `pacer budgets set` would.
              const id = caps[o.by % 2]!
              const now = capBooks(db, id).cap
              budgets[o.by % 2]!.setScopedCap(
                o.by % 2 === 0 ? { ...KEPT, period: 'day' } : { ...KEPT, taskType: 'classify' },
                now + o.by,
              )
            }
            check()
          })
          for (const res of outstanding.splice(0)) budgets[0]!.release(res.id)
          for (const id of caps) {
            expect(capBooks(db, id)).toMatchObject({ reserved: 0, spent: settled, doubt })
          }
          expect(budgets[0]!.capViews().map((v) => v.reservedMicros)).toEqual([0, 0, 0])
          for (const d of open.splice(0)) d.close()
        },
      ),
      { numRuns: 100 },
    )
  })

  it('names the cap that stops a call, and a call reserved before midnight settles in its day', () => {
    const { budgets, db } = setup(null)
    const [a] = budgets
    const id = a!.setScopedCap({ ...KEPT, period: 'day' }, 1000)
    expect(a!.reserve({ ...SCOPE, taskId: 1, worker: 'w0', micros: 1001 })).toMatchObject({
      kind: 'stop',
      reason: expect.stringMatching(
        /^held by budget: the daily cap \(UTC\) on all spend is \$0\.0010 for \d{4}-\d\d-\d\d, \$0\.0000 spent/,
      ) as string,
    })
    const r = a!.reserve({ ...SCOPE, taskId: 1, worker: 'w0', micros: 600 })
    expect(r.kind).toBe('reserved')
    const key = a!.capViews()[0]!.periodKey
    // The answer lands the next day: it is charged to the day that admitted it.
    db.prepare('UPDATE budget_holds SET period_key = ?').run('1999-01-01')
    a!.settle(SCOPE, (r as { id: number }).id, 500)
    expect(
      db
        .prepare(
          'SELECT period_key AS key, spent_micros AS spent FROM spend_cap_periods WHERE cap = ?',
        )
        .all(id),
    ).toEqual(
      expect.arrayContaining([
        { key: '1999-01-01', spent: 500 },
        { key, spent: 0 },
      ]),
    )
  })
})
