// The shared announced budget of the pacing store contract (run by store-suite.ts for every
// backend): a call is admitted only when the slot and the budget every worker spends from both
// allow it, a reading replaces an older one by the order the provider counted the calls in, the
// bucket refills, and a refusal gives its cost back.
import { expect, it } from 'vitest'
import type { BudgetCost, BudgetTicket } from '../../../../src/main/engine/pacing/shared-budget'
import { levelOf } from '../../../../src/main/engine/pacing/shared-budget'
import type { ControllerState, PacingStore } from '../../../../src/main/engine/pacing/store'
import { SEED_AIMD } from '../../../../src/main/engine/core/types'
import type { StoreHandles } from './store-suite'

const T0 = 1_000_000

/** One request, no tokens: the requests budget alone. */
const REQUEST: BudgetCost = { requests: 1, tokens: 0, 'input-tokens': 0, 'output-tokens': 0 }
/** 10 requests per 10 s: one a second. */
const RATE = 10 / 10_000

function init(limit: number) {
  const controller: ControllerState = { limit, lastCutAt: null, memory: null }
  return { params: { ...SEED_AIMD, max: 20, initial: limit }, controller }
}

async function admitted(store: PacingStore, worker: string, now: number): Promise<BudgetTicket> {
  const a = await store.admit('p', worker, now, 0, REQUEST)
  expect(a.admitted).toBe(true)
  expect(a.ticket).toBeDefined()
  return a.ticket as BudgetTicket
}

/** Releases a call with the answer's reading: `remaining` when the provider counted it. */
function answered(store: PacingStore, worker: string, ticket: BudgetTicket, remaining: number) {
  return store.release('p', worker, {
    now: T0 + 10,
    waiting: 0,
    outcome: 'success',
    budget: {
      ticket,
      reading: { requests: { limit: 10, ratePerMs: RATE, refilled: remaining } },
    },
  })
}

export function sharedBudgetTests(handles: (leaseMs?: number) => Promise<StoreHandles>): void {
  it('the announced budget is shared: a call is admitted only when the slot and the budget both allow it', async () => {
    const h = await handles(60_000)
    await h.a.join('p', 'w1', init(8), T0)
    await h.b.join('p', 'w2', init(8), T0)
    // Nothing announced yet: the slot alone decides, and nothing is counted.
    const first = await admitted(h.a, 'w1', T0)
    expect(first.seq).toBe(0)
    expect(await h.b.budget('p')).toMatchObject({ s: 0, d: {} })
    // Its answer: 3 left when the provider counted it.
    await answered(h.a, 'w1', first, 3)
    expect((await h.b.budget('p')).d.requests).toMatchObject({ l: 10, v: 3, q: 0 })
    // Three more calls between both workers, not three each.
    await admitted(h.b, 'w2', T0 + 10)
    await admitted(h.a, 'w1', T0 + 10)
    await admitted(h.b, 'w2', T0 + 10)
    const refused = await h.a.admit('p', 'w1', T0 + 10, 0, REQUEST)
    expect(refused).toMatchObject({ admitted: false, inflight: 3 })
    // One request refills in 1 s: the wait says so, and the slot was not taken.
    expect(refused.budgetWaitMs).toBe(1000)
    expect((await h.b.admit('p', 'w2', T0 + 10, 0, REQUEST)).admitted).toBe(false)
    // A call that does not pace by the budget (no cost) takes a slot only.
    expect((await h.b.admit('p', 'w2', T0 + 10, 0)).admitted).toBe(true)
    // The reset refills: one a second, for whichever worker asks first.
    await admitted(h.b, 'w2', T0 + 1010)
    expect((await h.a.admit('p', 'w1', T0 + 1010, 0, REQUEST)).admitted).toBe(false)
    await admitted(h.a, 'w1', T0 + 2010)
  })

  it('a newer reading replaces an older one by the order the calls were counted in, not by arrival', async () => {
    const h = await handles(60_000)
    await h.a.join('p', 'w1', init(8), T0)
    await h.b.join('p', 'w2', init(8), T0)
    const seed = await admitted(h.a, 'w1', T0)
    await answered(h.a, 'w1', seed, 9)
    const older = await admitted(h.a, 'w1', T0 + 1)
    const newer = await admitted(h.b, 'w2', T0 + 2)
    const last = await admitted(h.b, 'w2', T0 + 3)
    expect([older.seq, newer.seq, last.seq]).toEqual([1, 2, 3])
    // The later call's answer arrives first: 2 left as of it, and one call admitted after it.
    await answered(h.b, 'w2', newer, 2)
    const after = await h.a.budget('p')
    expect(after.d.requests).toMatchObject({ q: 2 })
    expect(levelOf(after.d.requests!, T0 + 10)).toBeCloseTo(1, 6)
    // The earlier call's answer arrives later, with more left: it is older news, ignored.
    await answered(h.a, 'w1', older, 8)
    expect((await h.b.budget('p')).d.requests).toEqual(after.d.requests)
    // The last call's answer is newer again: it replaces the reading.
    await answered(h.b, 'w2', last, 5)
    expect((await h.a.budget('p')).d.requests).toMatchObject({ q: 3, v: 5 })
  })

  it('a refused call gives its charge back; usage corrects an estimate the reading has not counted', async () => {
    const h = await handles(60_000)
    await h.a.join('p', 'w1', init(8), T0)
    await h.b.join('p', 'w2', init(8), T0)
    await answered(h.a, 'w1', await admitted(h.a, 'w1', T0), 2)
    const one = await admitted(h.a, 'w1', T0 + 10)
    await admitted(h.b, 'w2', T0 + 10)
    expect((await h.b.admit('p', 'w2', T0 + 10, 0, REQUEST)).admitted).toBe(false)
    // Refused without headers: the provider did not count it, and neither does the budget.
    await h.a.release('p', 'w1', {
      now: T0 + 10,
      waiting: 0,
      outcome: 'throttle',
      budget: { ticket: one, correction: { requests: -1 } },
    })
    expect((await h.b.admit('p', 'w2', T0 + 10, 0, REQUEST)).admitted).toBe(true)
  })

  it('a handoff takes the freed slot again only if the shared budget allows the next call', async () => {
    const h = await handles(60_000)
    await h.a.join('p', 'w1', init(8), T0)
    await h.b.join('p', 'w2', init(8), T0)
    await answered(h.a, 'w1', await admitted(h.a, 'w1', T0), 2)
    await admitted(h.a, 'w1', T0 + 10)
    await admitted(h.b, 'w2', T0 + 10)
    const spent = await h.a.release('p', 'w1', {
      now: T0 + 10,
      waiting: 1,
      outcome: 'success',
      handoff: true,
      handoffCost: REQUEST,
    })
    expect(spent).toMatchObject({ handedOff: false, inflight: 1 })
    expect(spent.ticket).toBeUndefined()
    // A second later one request has come back: the handoff takes it, with its ticket.
    const next = await h.b.admit('p', 'w2', T0 + 10, 0)
    expect(next.admitted).toBe(true)
    const refilled = await h.b.release('p', 'w2', {
      now: T0 + 1010,
      waiting: 1,
      outcome: 'success',
      handoff: true,
      handoffCost: REQUEST,
    })
    expect(refilled).toMatchObject({ handedOff: true })
    expect(refilled.ticket?.seq).toBe(3)
  })
}
