// The partition's one pace (shared-lane.ts, lane-gate.ts): the lane itself, a worker's side of
// it, and two connections to one SQLite file (what two processes see) sending by it together:
// between them one call per spacing, not one each.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { SEED_AIMD } from '../../../../src/main/engine/core/types'
import { laneWaitMs, takeLane } from '../../../../src/main/engine/pacing/shared-lane'
import { LaneGate } from '../../../../src/main/engine/pacing/lane-gate'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import type { BudgetCost, BudgetTicket } from '../../../../src/main/engine/pacing/shared-budget'
import type { ControllerState, PacingStore } from '../../../../src/main/engine/pacing/store'
import { SqlitePacingStore } from '../../../../src/main/engine/pacing/store-sqlite'

const T0 = 1_000_000
const REQUEST: BudgetCost = { requests: 1, tokens: 0, 'input-tokens': 0, 'output-tokens': 0 }
/** The partition's pace: a request a second, one call at a time. */
const ONE_A_SECOND = { requests: { ratePerMs: 1 / 1000, capacity: 1 } }
const PACED: BudgetCost = { ...REQUEST, lane: ONE_A_SECOND }

const dirs: string[] = []
const dbs: Database.Database[] = []

afterEach(() => {
  for (const db of dbs.splice(0)) db.close()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function twoProcesses(): { a: PacingStore; b: PacingStore } {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-lane-'))
  dirs.push(dir)
  const file = path.join(dir, 'pacer.db')
  const [dbA, dbB] = [openDatabase(file), openDatabase(file)]
  dbs.push(dbA, dbB)
  return {
    a: new SqlitePacingStore({ db: dbA, leaseMs: 60_000 }),
    b: new SqlitePacingStore({ db: dbB, leaseMs: 60_000 }),
  }
}

function init(limit: number) {
  const controller: ControllerState = { limit, lastCutAt: null, memory: null }
  return { params: { ...SEED_AIMD, max: 40, initial: limit }, controller }
}

/** Joins both and announces 600 requests a minute: the announced bucket has room for many. */
async function announced(a: PacingStore, b: PacingStore): Promise<void> {
  await a.join('p', 'w1', init(40), T0)
  await b.join('p', 'w2', init(40), T0)
  const first = await a.admit('p', 'w1', T0, 0, REQUEST)
  const reading = { requests: { limit: 600, ratePerMs: 600 / 60_000, refilled: 599 } }
  await a.release('p', 'w1', {
    now: T0,
    waiting: 0,
    outcome: 'success',
    budget: { ticket: first.ticket as BudgetTicket, reading },
  })
}

describe('the shared lane', () => {
  it('holds one call, refills at the rate, and a call larger than it goes once it is full', () => {
    const cost = { ...REQUEST, tokens: 300 }
    const pace = { tokens: { ratePerMs: 0.1, capacity: 200 } }
    expect(laneWaitMs(undefined, pace, cost, T0)).toBe(0)
    const taken = takeLane(undefined, pace, cost, T0)
    expect(taken.tokens).toEqual({ v: -100, t: T0, r: 0.1 })
    // The debt of 100 and a full lane of 200: 3 s at 0.1 a ms.
    expect(laneWaitMs(taken, pace, cost, T0)).toBe(3000)
    expect(laneWaitMs(taken, pace, { ...cost, tokens: 50 }, T0)).toBe(1500)
    // Never above what it holds, however long it rested.
    expect(laneWaitMs(taken, pace, cost, T0 + 60_000)).toBe(0)
    expect(takeLane(taken, pace, cost, T0 + 60_000).tokens).toEqual({
      v: -100,
      t: T0 + 60_000,
      r: 0.1,
    })
  })

  it("refills at the rate of the worker that last took from it, not at the asker's stale one", () => {
    // The worker that heard the rise takes at 1 a ms; the other, whose calls all waited on the
    // lane and heard no answer, still knows 0.1: at its own rate it waited 10 times too long and
    // was left behind every call of the first.
    const cost = { ...REQUEST, tokens: 100 }
    const heard = { tokens: { ratePerMs: 1, capacity: 100 } }
    const stale = { tokens: { ratePerMs: 0.1, capacity: 100 } }
    const taken = takeLane(undefined, heard, cost, T0)
    expect(laneWaitMs(taken, stale, cost, T0)).toBe(100)
    expect(laneWaitMs(taken, stale, cost, T0 + 100)).toBe(0)
    // Taken by the stale worker, the lane goes at its rate until the other takes again.
    const slow = takeLane(taken, stale, cost, T0 + 100)
    expect(laneWaitMs(slow, heard, cost, T0 + 100)).toBe(1000)
  })
})

describe('a worker sends by the shared lane while several send one call at a time', () => {
  function pace(workers: number): SendPace {
    const p = new SendPace()
    p.announce('requests', 600 / 60_000, T0)
    p.take(T0, { ...REQUEST })
    p.adopt({ burstMs: 0, scale: 1, scaleAt: null, cutAt: T0 }, T0, workers)
    return p
  }

  it('asks the store at the partition pace (its own share times the workers), and owes nothing after', () => {
    const p = pace(3)
    const own = p.view().perMinute.requests as number
    const gate = new LaneGate()
    expect(gate.waitMs(1234, p, 60_000)).toBe(0)
    const cost = gate.cost({ ...REQUEST })
    expect(cost.lane?.requests?.ratePerMs).toBeCloseTo((own / 60_000) * 3, 12)
    expect(cost.lane?.requests?.capacity).toBe(1)
    p.take(T0, { ...REQUEST })
    expect(gate.admitted('r', p, T0)).toBe('r')
    expect(p.delayMs(T0, { ...REQUEST })).toBe(Math.ceil(60_000 / own))
  })

  it('a worker alone, or a pace that still bursts, keeps its own pace', () => {
    const gate = new LaneGate()
    expect(gate.waitMs(1234, pace(1), 60_000)).toBe(1234)
    expect(gate.cost({ ...REQUEST }).lane).toBeUndefined()
    const bursting = pace(3)
    bursting.adopt(undefined, T0, 3)
    expect(gate.waitMs(1234, bursting, 60_000)).toBe(1234)
  })
})

describe('the shared lane between two processes on one SQLite file', () => {
  it('two processes sending by the lane together send one call per spacing between them', async () => {
    const { a, b } = twoProcesses()
    await announced(a, b)
    const sent = async (at: number) => {
      let n = 0
      for (const [store, worker] of [
        [a, 'w1'],
        [b, 'w2'],
        [a, 'w1'],
        [b, 'w2'],
      ] as const) {
        if ((await store.admit('p', worker, at, 0, PACED)).admitted) n++
      }
      return n
    }
    expect(await sent(T0)).toBe(1)
    // The store says when the lane has the next call.
    const refused = await b.admit('p', 'w2', T0 + 400, 0, PACED)
    expect(refused).toMatchObject({ admitted: false, budgetWaitMs: 600 })
    expect(await sent(T0 + 999)).toBe(0)
    expect(await sent(T0 + 1000)).toBe(1)
    // Not by the lane: the announced bucket alone still admits.
    expect((await a.admit('p', 'w1', T0 + 1000, 0, REQUEST)).admitted).toBe(true)
  })

  it('a worker that heard no answer since a rise takes from the lane at the rate the other heard', async () => {
    // lane-fresh-rate.ts: w1's answer announced 600 a minute (the rise); w2 last read 60 a minute,
    // its calls all waited on the lane. The lane keeps w2's share, of the rate the store read.
    const { a, b } = twoProcesses()
    await announced(a, b)
    const stale: BudgetCost = {
      ...REQUEST,
      lane: {
        requests: {
          ratePerMs: 60 / 60_000,
          capacity: 1,
          announced: 60 / 60_000,
          announcedMs: 60_000,
        },
      },
    }
    expect((await b.admit('p', 'w2', T0, 0, stale)).admitted).toBe(true)
    // One call per 100 ms at 600 a minute: at the stale rate it waited 1,000 ms.
    expect(await b.admit('p', 'w2', T0 + 50, 0, stale)).toMatchObject({
      admitted: false,
      budgetWaitMs: 50,
    })
    expect((await b.admit('p', 'w2', T0 + 100, 0, stale)).admitted).toBe(true)
  })
})
