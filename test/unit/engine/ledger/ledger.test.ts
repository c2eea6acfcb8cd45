import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Ledger, type LedgerRecordInput } from '../../../../src/main/engine/ledger/ledger'
import { PRICE_TABLE_VERSION, Prices } from '../../../../src/main/engine/pricing/prices'
import type { Usage } from '../../../../src/main/engine/core/types'
import { openLedgerDb } from '../../../helpers/ledger-db'

const T0 = 1_700_000_040_000 // a multiple of 60,000: minute buckets start here

const usage = (inputTokens: number, outputTokens: number, cached = 0): Usage => ({
  inputTokens,
  cachedInputTokens: cached,
  cacheWriteTokens: 0,
  outputTokens,
})
const NO_TOKENS = usage(0, 0)

// sim-small is $3 in / $15 out: every cost below is 3 × input + 15 × output micro-dollars.
function ev(over: Partial<LedgerRecordInput> = {}): LedgerRecordInput {
  return {
    ts: T0,
    taskId: 1,
    batchId: 'b1',
    fp: 'fpA',
    worker: 'w1',
    taskType: 'summarize',
    provider: 'sim',
    model: 'sim-small',
    step: 1,
    usage: usage(1_000, 100),
    outcome: 'executed',
    latencyMs: 10,
    status: 200,
    epoch: 1,
    ...over,
  }
}

/** A multi-step execution as the runner records it: step k resends k × perStep input tokens. */
function execute(ledger: Ledger, steps: number, over: Partial<LedgerRecordInput> = {}): void {
  for (let step = 1; step <= steps; step++) {
    ledger.record(ev({ step, usage: usage(step * 1_000, 100), ...over }))
  }
}

let h: ReturnType<typeof openLedgerDb>
let prices: Prices
let ledger: Ledger
let now = T0

beforeEach(() => {
  h = openLedgerDb()
  prices = new Prices()
  now = T0
  ledger = new Ledger({ db: h.db, prices, clock: { now: () => now } })
})
afterEach(() => h.close())

describe('record', () => {
  it('prices the call, writes one row with the price version, and returns its cost', () => {
    const r = ledger.record(ev())
    expect(r.costMicros).toBe(4_500)
    const row = h.db.prepare('SELECT * FROM ledger WHERE id = ?').get(r.id)
    expect(row).toMatchObject({
      cost_micros: 4_500,
      price_version: PRICE_TABLE_VERSION,
      outcome: 'executed',
      input_tokens: 1_000,
      output_tokens: 100,
      saved_micros: null,
    })
  })

  it('stamps the clock when no ts is given', () => {
    now = T0 + 123
    const { ts: _ts, ...rest } = ev()
    const { id } = ledger.record(rest)
    expect(h.db.prepare('SELECT ts FROM ledger WHERE id = ?').pluck().get(id)).toBe(T0 + 123)
  })

  it('keeps the cost a row was priced with when prices change later', () => {
    const first = ledger.record(ev())
    prices.setOverrides({ 'sim/sim-small': { input: 6, output: 30 } })
    const second = ledger.record(ev())
    expect(second.costMicros).toBe(9_000)
    const rows = h.db
      .prepare('SELECT cost_micros AS c, price_version AS v FROM ledger ORDER BY id')
      .all() as { c: number; v: string }[]
    expect(rows[0]).toEqual({ c: first.costMicros, v: PRICE_TABLE_VERSION })
    expect(rows[1]!.v).toMatch(/\+overrides\./)
  })

  it('records an unknown model as unpriced (NULL), never 0', () => {
    const r = ledger.record(ev({ model: 'mystery-1' }))
    expect(r.costMicros).toBeNull()
    expect(h.db.prepare('SELECT cost_micros FROM ledger').pluck().get()).toBeNull()
  })

  it('records a call without tokens as costing 0 even on an unknown model', () => {
    const r = ledger.record(ev({ model: 'mystery-1', outcome: 'throttled', usage: NO_TOKENS }))
    expect(r.costMicros).toBe(0)
  })

  it('rejects bad events without writing anything', () => {
    expect(() => ledger.record(ev({ outcome: 'reused' }))).toThrow(/carries no tokens/)
    expect(() => ledger.record(ev({ outcome: 'done' as never }))).toThrow(/outcome.*"done"/)
    expect(() => ledger.record(ev({ usage: usage(10, 0, 20) }))).toThrow(RangeError)
    expect(() => ledger.record(ev({ ts: 1.5 }))).toThrow(/ts/)
    expect(() => ledger.record(ev({ savedMicros: 5 }))).toThrow(/savedMicros/)
    expect(() =>
      ledger.record(ev({ outcome: 'reused', usage: NO_TOKENS, savedMicros: 0.5 })),
    ).toThrow(/savedMicros.*0\.5/)
    expect(h.db.prepare('SELECT COUNT(*) FROM ledger').pluck().get()).toBe(0)
  })
})

describe('immutability', () => {
  it('refuses UPDATE and DELETE on ledger rows', () => {
    const { id } = ledger.record(ev())
    expect(() => h.db.prepare('UPDATE ledger SET cost_micros = 0 WHERE id = ?').run(id)).toThrow(
      /immutable/,
    )
    expect(() => h.db.prepare('DELETE FROM ledger WHERE id = ?').run(id)).toThrow(/immutable/)
    expect(() => h.db.prepare('DELETE FROM ledger').run()).toThrow(/immutable/)
    expect(h.db.prepare('SELECT cost_micros FROM ledger WHERE id = ?').pluck().get(id)).toBe(4_500)
  })
})

describe('rollupByType', () => {
  it('counts a 10-step task as one execution', () => {
    execute(ledger, 10)
    const [r] = ledger.rollupByType()
    // input 1,000 × (1 + … + 10) = 55,000; output 10 × 100; cost 55,000 × 3 + 1,000 × 15
    expect(r).toMatchObject({
      taskType: 'summarize',
      runs: 1,
      executed: 1,
      reused: 0,
      duplicates: 0,
      avgInputTokens: 55_000,
      inputTokens: 55_000,
      outputTokens: 1_000,
      totalTokens: 56_000,
      costMicros: 180_000,
      unpricedCalls: 0,
    })
  })

  it('counts executions recorded without task id or epoch', () => {
    execute(ledger, 3, { taskId: null, epoch: null })
    execute(ledger, 2, { taskId: null, epoch: null, fp: 'fpB' })
    expect(ledger.totals()).toMatchObject({ executed: 2, runs: 2, avgInputTokens: 4_500 })
  })

  it('counts reuses and what they saved (the original execution cost each)', () => {
    execute(ledger, 10)
    expect(ledger.originalCostMicros('fpA')).toBe(180_000)
    for (const taskId of [2, 3, 4]) {
      ledger.record(ev({ taskId, worker: `w${taskId}`, outcome: 'reused', usage: NO_TOKENS }))
    }
    const [r] = ledger.rollupByType()
    expect(r).toMatchObject({
      runs: 4,
      executed: 1,
      reused: 3,
      savedMicros: 540_000,
      costMicros: 180_000, // reuse costs nothing
      avgInputTokens: 55_000,
    })
    const saved = h.db
      .prepare("SELECT saved_micros FROM ledger WHERE outcome = 'reused'")
      .pluck()
      .all()
    expect(saved).toEqual([180_000, 180_000, 180_000])
  })

  it('keeps an explicit savedMicros on a reuse row', () => {
    execute(ledger, 1)
    ledger.record(ev({ taskId: 2, outcome: 'reused', usage: NO_TOKENS, savedMicros: 7 }))
    expect(ledger.totals().savedMicros).toBe(7)
  })

  it('prices what duplicates wasted, counting each duplicate execution once', () => {
    execute(ledger, 2, { fp: 'fpB', taskId: 5 })
    // A fallback execution of the same fingerprint by another task: billed, and a duplicate.
    execute(ledger, 2, { fp: 'fpB', taskId: 6, worker: 'w2', outcome: 'duplicate' })
    // A stale owner of the original task at an older epoch, also a duplicate.
    ledger.record(ev({ fp: 'fpB', taskId: 5, epoch: 0, outcome: 'duplicate', worker: 'w3' }))
    const t = ledger.totals()
    // each 2-step execution: input 3,000, output 200 → 9,000 + 3,000 = 12,000; the stale step 4,500
    expect(t).toMatchObject({
      executed: 1,
      duplicates: 2,
      runs: 3,
      wastedMicros: 16_500,
      costMicros: 28_500,
      inputTokens: 7_000,
      // (3,000 + 3,000 + 1,000) input tokens over 3 executions, floored
      avgInputTokens: 2_333,
    })
  })

  it('counts an execution that lost its claim midway as one duplicate, all of it wasted', () => {
    // The stale owner (epoch 1) ran steps 1–2 as owner, then learned at step 3 it had been fenced.
    execute(ledger, 2, { taskId: 5, epoch: 1 })
    ledger.record(
      ev({ taskId: 5, epoch: 1, step: 3, outcome: 'duplicate', usage: usage(3_000, 100) }),
    )
    // The worker that took over (epoch 2) ran the task again from the start.
    execute(ledger, 3, { taskId: 5, epoch: 2, worker: 'w2' })
    // Each 3-step run: input 6,000, output 300 → 18,000 + 4,500 = 22,500.
    expect(ledger.totals()).toMatchObject({
      runs: 2,
      executed: 1,
      duplicates: 1,
      wastedMicros: 22_500,
      costMicros: 45_000,
      avgInputTokens: 6_000,
    })
    expect(ledger.originalCostMicros('fpA')).toBe(22_500)
  })

  it('counts unpriced calls and never turns them into $0', () => {
    execute(ledger, 1, { taskType: 'priced' })
    ledger.record(ev({ taskType: 'mixed', fp: 'm1' }))
    ledger.record(ev({ taskType: 'mixed', fp: 'm2', model: 'mystery-1' }))
    ledger.record(ev({ taskType: 'unknown', fp: 'u1', model: 'mystery-1' }))
    ledger.record(ev({ taskType: 'unknown', fp: 'u1', step: 2, model: 'mystery-1' }))
    // Zero-token rows are not unpriced calls, whatever the model.
    ledger.record(ev({ taskType: 'unknown', fp: 'u2', model: 'mystery-1', outcome: 'throttled' }))
    ledger.record(
      ev({ taskType: 'unknown', fp: 'u3', model: 'mystery-1', outcome: 'error', usage: NO_TOKENS }),
    )
    const rollups = ledger.rollupByType()
    expect(rollups.map((r) => [r.taskType, r.costMicros, r.unpricedCalls])).toEqual([
      ['mixed', 4_500, 1],
      ['priced', 4_500, 0],
      ['unknown', null, 3], // the throttled row above carried tokens: it was billed, unpriced
    ])
    expect(ledger.totals()).toMatchObject({ costMicros: 9_000, unpricedCalls: 4 })
  })

  it('cannot say what a reuse of an unpriced execution saved', () => {
    execute(ledger, 2, { model: 'mystery-1' })
    expect(ledger.originalCostMicros('fpA')).toBeNull()
    ledger.record(ev({ taskId: 2, model: 'mystery-1', outcome: 'reused', usage: NO_TOKENS }))
    const saved = h.db.prepare("SELECT saved_micros FROM ledger WHERE outcome = 'reused'")
    expect(saved.pluck().get()).toBeNull()
    expect(ledger.totals()).toMatchObject({ reused: 1, savedMicros: null, costMicros: null })
  })

  it('counts throttled, errors and abandoned rows', () => {
    execute(ledger, 1)
    const bare = { usage: NO_TOKENS, status: 429 }
    ledger.record(ev({ ...bare, outcome: 'throttled' }))
    ledger.record(ev({ ...bare, outcome: 'throttled' }))
    ledger.record(ev({ ...bare, outcome: 'error', status: 500 }))
    ledger.record(ev({ usage: usage(500, 0), outcome: 'abandoned', status: null }))
    expect(ledger.totals()).toMatchObject({
      throttled: 2,
      errors: 1,
      abandoned: 1,
      runs: 1,
      executed: 1,
      costMicros: 4_500 + 1_500, // the abandoned call's input was billed
    })
  })

  it('sorts by cost, most expensive first, and totals match the sum of types', () => {
    execute(ledger, 1, { taskType: 'cheap', fp: 'c' })
    execute(ledger, 3, { taskType: 'dear', fp: 'd' })
    execute(ledger, 2, { taskType: 'mid', fp: 'm' })
    const rollups = ledger.rollupByType()
    expect(rollups.map((r) => r.taskType)).toEqual(['dear', 'mid', 'cheap'])
    const t = ledger.totals()
    for (const key of ['runs', 'executed', 'inputTokens', 'outputTokens', 'costMicros'] as const) {
      expect(t[key]).toBe(rollups.reduce((s, r) => s + (r[key] ?? 0), 0))
    }
  })

  it('filters by time window (since inclusive, until exclusive) and batch', () => {
    ledger.record(ev({ ts: T0, fp: 'a' }))
    ledger.record(ev({ ts: T0 + 1_000, fp: 'b', batchId: 'b2' }))
    ledger.record(ev({ ts: T0 + 2_000, fp: 'c' }))
    expect(ledger.totals({ since: T0 + 1_000 }).executed).toBe(2)
    expect(ledger.totals({ until: T0 + 1_000 }).executed).toBe(1)
    expect(ledger.totals({ since: T0, until: T0 + 2_000 }).executed).toBe(2)
    expect(ledger.totals({ batchId: 'b2' }).executed).toBe(1)
    expect(ledger.rollupByType({ batchId: 'b1', since: T0 + 1 })[0]?.executed).toBe(1)
    expect(ledger.rollupByType({ batchId: 'nope' })).toEqual([])
    expect(() => ledger.totals({ since: Number.NaN })).toThrow(/since/)
  })

  it('reports an empty ledger as zeros', () => {
    expect(ledger.totals()).toMatchObject({ runs: 0, costMicros: 0, avgInputTokens: 0 })
    expect(ledger.rollupByType()).toEqual([])
  })
})

describe('originalCostMicros', () => {
  it('is the cost of the latest execution of the fingerprint, not of every execution', () => {
    expect(ledger.originalCostMicros('fpA')).toBeNull()
    execute(ledger, 1, { taskId: 1, epoch: 1 }) // 4,500
    execute(ledger, 2, { taskId: 1, epoch: 2 }) // 12,000 (after a takeover)
    expect(ledger.originalCostMicros('fpA')).toBe(12_000)
  })
})

describe('costOverTime', () => {
  it('buckets cost, calls and tokens in epoch-aligned buckets', () => {
    ledger.record(ev({ ts: T0 }))
    ledger.record(ev({ ts: T0 + 59_999, fp: 'b' }))
    ledger.record(ev({ ts: T0 + 60_000, fp: 'c', usage: usage(2_000, 0) }))
    ledger.record(ev({ ts: T0 + 60_001, fp: 'c', taskId: 9, outcome: 'reused', usage: NO_TOKENS }))
    ledger.record(ev({ ts: T0 + 185_000, fp: 'd', model: 'mystery-1' }))
    expect(ledger.costOverTime({ bucketMs: 60_000 })).toEqual([
      { ts: T0, costMicros: 9_000, calls: 2, tokens: 2_200 },
      { ts: T0 + 60_000, costMicros: 6_000, calls: 1, tokens: 2_000 },
      { ts: T0 + 180_000, costMicros: 0, calls: 1, tokens: 1_100 },
    ])
    expect(
      ledger.costOverTime({ bucketMs: 60_000, since: T0 + 60_000, until: T0 + 180_000 }),
    ).toEqual([{ ts: T0 + 60_000, costMicros: 6_000, calls: 1, tokens: 2_000 }])
    // Bucket starts are multiples of bucketMs, not of the first row's ts.
    const hourly = ledger.costOverTime({ bucketMs: 3_600_000 })
    for (const b of hourly) expect(b.ts % 3_600_000).toBe(0)
    expect(hourly.reduce((s, b) => s + b.calls, 0)).toBe(4)
  })

  it('rejects a bucket that is not a positive integer', () => {
    expect(() => ledger.costOverTime({ bucketMs: 0 })).toThrow(/bucketMs.*0/)
    expect(() => ledger.costOverTime({ bucketMs: 1.5 })).toThrow(TypeError)
  })
})

describe('events', () => {
  it('yields every row in id order as a snapshot, and leaves the connection usable', () => {
    h.db.transaction(() => {
      for (let i = 0; i < 4_500; i++) ledger.record(ev({ ts: T0 + i, fp: `f${i}`, taskId: i }))
    })()
    const it = ledger.events()
    const first = it.next()
    expect(first.value).toMatchObject({ id: 1, ts: T0, taskId: 0, costMicros: 4_500, step: 1 })
    // Recording while an export is paused must work (an open stmt.iterate() would make it throw).
    ledger.record(ev({ ts: T0 + 10_000_000, fp: 'late' }))
    let n = 1
    let lastId = 1
    for (const row of it) {
      expect(row.id).toBeGreaterThan(lastId)
      lastId = row.id
      n++
      if (n === 3_000) ledger.record(ev({ fp: 'later' }))
    }
    expect(n).toBe(4_500)
    expect([...ledger.events({ since: T0 + 4_000, until: T0 + 4_010 })]).toHaveLength(10)
  })
})

describe('executedBy', () => {
  const fpId = () =>
    (h.db.prepare('SELECT fp_id FROM ledger WHERE fp = ? LIMIT 1').get('fpA') as { fp_id: number })
      .fp_id
  const REPLAY = { usage: NO_TOKENS, latencyMs: null, status: null, step: 1 } as const

  it("is the task's own execution under that epoch", () => {
    ledger.record(ev({ taskId: 13, epoch: 1 }))
    expect(ledger.executedBy(fpId(), 13, 1)).toBe(true)
    expect(ledger.executedBy(fpId(), 13, 2)).toBe(false)
    expect(ledger.executedBy(fpId(), 72, 1)).toBe(false)
  })

  it('is its own when a later epoch replayed the calls it paid', () => {
    // Task 13 paid under epoch 1, its end was lost; duplicate 72 took the claim over (epoch 2) and
    // replayed 13's journaled answer: the result 13 finds at epoch 2 is its own, not a reuse.
    ledger.record(ev({ taskId: 13, epoch: 1 }))
    ledger.record(ev({ ...REPLAY, taskId: 72, epoch: 2, outcome: 'abandoned', step: 0 }))
    ledger.record(ev({ ...REPLAY, taskId: 72, epoch: 2, outcome: 'replayed', savedMicros: 4_500 }))
    expect(ledger.executedBy(fpId(), 13, 2)).toBe(true)
    // The duplicate paid nothing: it did not execute.
    expect(ledger.executedBy(fpId(), 72, 2)).toBe(false)
  })

  it('is not its own when a later epoch paid the call again', () => {
    ledger.record(ev({ taskId: 13, epoch: 1 }))
    ledger.record(ev({ taskId: 72, epoch: 2 }))
    expect(ledger.executedBy(fpId(), 13, 2)).toBe(false)
    expect(ledger.executedBy(fpId(), 72, 2)).toBe(true)
  })
})
