// Every statement the console's reads run (its first screen, the Spend view, the task and batch
// pages, the export, the rollups' upkeep), captured as the engine prepares and runs it, then
// EXPLAINed with the same parameters: none may scan all of a table that grows with the work. A query that loses
// its index (or its rollup table) fails here instead of on a million-row database.
import type Database from 'better-sqlite3'
import { Writable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { openLedgerDb } from '../../../helpers/ledger-db'
import { fullScans as scansOf } from '../../../helpers/query-plans'

interface Run {
  sql: string
  args: unknown[]
}

/** Records every statement run on `db` from now on, with its parameters. */
function capture(db: Database.Database): Run[] {
  const runs: Run[] = []
  const prepare = db.prepare.bind(db)
  db.prepare = ((sql: string) => {
    const stmt = prepare(sql)
    for (const method of ['all', 'get', 'run', 'iterate'] as const) {
      const original = stmt[method].bind(stmt) as (...args: unknown[]) => unknown
      Object.defineProperty(stmt, method, {
        value: (...args: unknown[]) => {
          runs.push({ sql, args })
          return original(...args)
        },
      })
    }
    return stmt
  }) as typeof db.prepare
  return runs
}

/** The plan lines of a statement that read every row of a table that grows with the work. */
function fullScans(db: Database.Database, run: Run): string[] {
  if (!/^\s*(WITH|SELECT|INSERT|UPDATE)/i.test(run.sql)) return []
  return scansOf(db, run.sql, run.args)
}

let h: ReturnType<typeof openLedgerDb>
let engine: Engine
let runs: Run[]

function setup(): void {
  h = openLedgerDb()
  runs = capture(h.db)
  engine = createEngine({ dbPath: h.file, db: h.db })
  const T0 = Date.now() - 30 * 60_000
  const batchId = engine.handlers['tasks:enqueue']({
    tasks: Array.from({ length: 50 }, (_, i) => ({ type: `t${i % 3}`, payload: { i } })),
  }) as { batchId: string }
  for (let i = 0; i < 1_500; i++) {
    const reused = i % 4 === 3
    engine.ledger.record({
      ts: T0 + i * 1_000,
      taskId: (i % 50) + 1,
      batchId: batchId.batchId,
      fp: `fp-${i % 50}`,
      worker: 'w',
      taskType: `t${i % 3}`,
      provider: 'sim',
      model: 'sim-small',
      step: 1,
      usage: {
        inputTokens: reused ? 0 : 100,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: reused ? 0 : 10,
      },
      outcome: reused ? 'reused' : 'executed',
      latencyMs: 5,
      status: 200,
      epoch: 1,
    })
  }
  runs.length = 0
}

afterEach(async () => {
  await engine.shutdown({ graceMs: 0 })
  h.close()
})

function expectNoFullScans(): void {
  expect(runs.length).toBeGreaterThan(0)
  const offenders = runs
    .map((r) => ({ sql: r.sql.replace(/\s+/g, ' ').trim(), scans: fullScans(h.db, r) }))
    .filter((r) => r.scans.length > 0)
  expect(offenders).toEqual([])
}

describe('query plans of the console reads', () => {
  it('rollups, spend over time and the rollups upkeep use rollup tables or indexes', async () => {
    setup()
    const since = Date.now() - 3_600_000
    const { handlers, ledger } = engine
    await handlers['ledger:rollup']({})
    await handlers['ledger:rollup']({ since })
    await handlers['ledger:rollup']({ since: since + 7, until: Date.now() - 60_007 })
    await handlers['ledger:rollup']({ batchId: 'b' })
    for (const bucketMs of [15_000, 60_000, 3_600_000]) {
      await handlers['ledger:over-time']({ bucketMs, since })
      await handlers['ledger:over-time']({ bucketMs })
    }
    ledger.totals({ batchId: 'b' })
    // Appending, then folding the new rows in (as every read does first).
    for (let i = 0; i < 10; i++) {
      ledger.record({
        ts: Date.now(),
        taskId: 1,
        batchId: null,
        fp: 'fp-1',
        worker: 'w',
        taskType: 't1',
        provider: 'sim',
        model: 'sim-small',
        step: 2 + i,
        usage: { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 },
        outcome: i === 9 ? 'reused' : 'duplicate',
        latencyMs: null,
        status: null,
        epoch: 1,
      })
    }
    ledger.totals()
    expectNoFullScans()
  })

  it('the filters no rollup table covers read the ledger through an index', async () => {
    setup()
    const since = Date.now() - 3_600_000
    const batchId = (await engine.handlers['batches:list']({}))[0]!.id
    const direct = engine.ledger
    direct.totals({ batchId, since })
    direct.costOverTime({ bucketMs: 10_000, since })
    expectNoFullScans()
  })

  it('the events page and the events export', async () => {
    setup()
    const batchId = (await engine.handlers['batches:list']({}))[0]!.id
    const since = Date.now() - 600_000
    for (const filter of [{}, { since }, { batchId }]) {
      expect([...engine.ledger.events(filter)].length).toBeGreaterThan(0)
      await engine.exportCsv('events', new Writable({ write: (_c, _e, done) => done() }), filter)
    }
    expectNoFullScans()
  })
})

describe('query plans of the task and batch pages', () => {
  // The page's total is a COUNT(*) over every task (SCAN tasks USING COVERING INDEX), the write
  // side's to replace with its batch counters: expected to fail until then, then `it` again.
  it('the tasks page: a window of rows and its total, with or without filters', async () => {
    setup()
    const batchId = (await engine.handlers['batches:list']({}))[0]!.id
    for (const input of [
      {},
      { offset: 40, limit: 40 },
      { statuses: ['queued' as const] },
      { batchId },
      { batchId, statuses: ['failed' as const, 'cancelled' as const] },
    ]) {
      await engine.handlers['tasks:list']({ offset: 0, limit: 100, ...input })
    }
    expectNoFullScans()
  })

  // Each batch's counts are columns of its row (migration 5): the list reads one row a batch.
  it('the batches list', async () => {
    setup()
    await engine.handlers['batches:list']({})
    expectNoFullScans()
  })
})
