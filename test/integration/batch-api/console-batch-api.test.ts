// The console's Batch API choice through the engine's commands (what both transports bind): an
// import with `batchApi` runs on an engine of its own as `pacer run --batch-api` does, its
// provider batches show under the batch, a cancel keeps what finished, and a resume continues on
// the batch API (never live). The vendor double's clock is moved by the test.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import type { BatchSummary } from '../../../src/shared/contract'
import { startBatchVendor, type BatchVendor } from '../../helpers/batch-vendor/server'
import type { FakeClock } from '../../helpers/clock'
import { query, tempDir } from '../../helpers/cli'
import { until } from '../../helpers/until'
import { envSecrets } from '../../../src/main/engine/app/secrets'

// What the double bills for gpt-4o-mini (the bundled list price; its batch rate is half).
const LIST = { 'gpt-4o-mini': { input: 0.15, output: 0.6 } }

let vendor: BatchVendor | undefined
let engine: Engine | undefined
const saved = { poll: process.env.PACER_BATCH_POLL_MS, settle: process.env.PACER_BATCH_SETTLE_MS }

afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  await vendor?.close()
  engine = undefined
  vendor = undefined
  process.env.PACER_BATCH_POLL_MS = saved.poll
  process.env.PACER_BATCH_SETTLE_MS = saved.settle
  if (saved.poll === undefined) delete process.env.PACER_BATCH_POLL_MS
  if (saved.settle === undefined) delete process.env.PACER_BATCH_SETTLE_MS
})

const lines = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ type: 'label', payload: { text: `item ${i % 4}` } }),
  ).join('\n')

async function consoleEngine(on?: {
  vendor: BatchVendor
  db: string
}): Promise<{ engine: Engine; db: string; vendor: BatchVendor }> {
  process.env.PACER_BATCH_POLL_MS = '50'
  process.env.PACER_BATCH_SETTLE_MS = '100'
  const v = on?.vendor ?? (await startBatchVendor({ errorShare: 0, processMs: 60_000 }))
  const db = on?.db ?? join(tempDir('pacer-console-batch-api-'), 'pacer.db')
  const e = createEngine({
    dbPath: db,
    secrets: envSecrets({ PACER_OPENAI_COMPATIBLE_API_KEY: 'sk-test-batch' }),
    // As `pacer serve --base-url` gives it: the key from the environment may go there.
    processBaseUrls: { 'openai-compatible': v.openaiBase },
  })
  await e.handlers['settings:set']({
    defaultProvider: 'openai-compatible',
    defaultModel: 'gpt-4o-mini',
  })
  e.start()
  vendor = v
  engine = e
  return { engine: e, db, vendor: v }
}

/** Four lines imported with the batch API chosen, as the import dialog sends them. */
async function importViaBatchApi(
  e: Engine,
  v: { clock: unknown },
): Promise<{ id: string; clock: FakeClock }> {
  const { batchId } = await e.handlers['batches:import']({
    fileName: 'b.jsonl',
    content: lines(4),
    batchApi: true,
  })
  return { id: batchId!, clock: v.clock as FakeClock }
}

async function batchOf(e: Engine, id: string): Promise<BatchSummary> {
  return (await e.handlers['batches:list']({})).find((b) => b.id === id)!
}

describe('the console’s Batch API choice, through the engine’s commands', () => {
  it('previews both prices, runs the batch through provider batches, and shows them under it', async () => {
    const { engine: e, db, vendor: v } = await consoleEngine()
    const preview = await e.handlers['batches:preview']({
      fileName: 'b.jsonl',
      content: lines(8),
    })
    const total = preview.forecast!.total
    expect(preview.batchApiRefusal).toBeNull()
    expect(total.batchCostMicros).toBeGreaterThan(0)
    // Half price, each component rounded on its own.
    expect(Math.abs(total.batchCostMicros! * 2 - total.costMicros!)).toBeLessThanOrEqual(4)

    const out = await e.handlers['batches:import']({
      fileName: 'b.jsonl',
      content: lines(8),
      batchApi: true,
    })
    const id = out.batchId!
    const clock = v.clock as FakeClock
    const first = await until(async () => (await batchOf(e, id)).providerBatches?.[0], 30_000)
    expect((await batchOf(e, id)).batchApi).toBe(true)
    expect(first).toMatchObject({ vendor: 'openai', model: 'gpt-4o-mini', requests: 4 })
    await until(async () => {
      const r = (await batchOf(e, id)).providerBatches?.[0]
      return r?.remoteId && r.status !== 'submitting' ? r : undefined
    }, 30_000)
    clock.advance(30_000)
    await until(
      async () => (await batchOf(e, id)).providerBatches?.[0]?.status === 'in_progress',
      30_000,
    )
    clock.advance(120_000)
    const done = await until(async () => {
      const b = await batchOf(e, id)
      return b.state === 'done' ? b : undefined
    }, 30_000)
    expect(done.counts).toMatchObject({ succeeded: 4, reused: 4 })
    expect(done.providerBatches![0]).toMatchObject({ status: 'completed', ended: true })
    // Its calls were never sent live (the double has no live endpoint), and priced at batch rate.
    const rows = query<{ n: number }>(
      db,
      "SELECT COUNT(*) AS n FROM ledger WHERE price_version LIKE '%+batch'",
    )
    expect(rows[0]!.n).toBe(4)
  })

  it('refuses the simulator, and a cancel keeps what finished', async () => {
    const { engine: e, vendor: v } = await consoleEngine()
    const sim = await e.handlers['batches:preview']({
      fileName: 's.jsonl',
      content: JSON.stringify({
        type: 't',
        payload: { text: 'x' },
        provider: 'sim',
        model: 'sim-fast',
      }),
    })
    expect(sim.errors).toEqual([])
    expect(sim.batchApiRefusal).toMatch(/simulator has no batch API/)

    const { id, clock } = await importViaBatchApi(e, v)
    const remote = await until(async () => {
      const r = (await batchOf(e, id)).providerBatches?.[0]
      return r?.remoteId ? r : undefined
    }, 30_000)
    // Half the lines done, then cancel.
    clock.advance(1_000 + 30_000)
    const asked = await e.handlers['provider-batches:cancel']({ id: remote.id })
    expect(asked.status).toBe('cancelling')
    clock.advance(5_000)
    const done = await until(async () => {
      const b = await batchOf(e, id)
      return b.state === 'done' ? b : undefined
    }, 30_000)
    expect(done.providerBatches![0]).toMatchObject({ status: 'cancelled', ended: true })
    expect(done.counts.succeeded).toBe(2)
    expect(done.counts.failed).toBe(2)
  })

  it('a console closed while its batch waits at the vendor resumes it there: nothing sent twice, nothing live', async () => {
    const first = await consoleEngine()
    const { db, vendor: v } = first
    const { batchId } = await first.engine.handlers['batches:import']({
      fileName: 'b.jsonl',
      content: lines(4),
      batchApi: true,
    })
    const id = batchId!
    await until(
      async () => (await batchOf(first.engine, id)).providerBatches?.[0]?.remoteId,
      30_000,
    )
    // The console closes while the batch waits at the vendor.
    await first.engine.shutdown()
    engine = undefined
    const sent = v.openai.submitted.length
    expect(sent).toBe(4)

    const second = await consoleEngine({ vendor: v, db })
    expect((await batchOf(second.engine, id)).state).toBe('interrupted')
    const resumed = await second.engine.handlers['batches:resume']({ batchId: id })
    expect(resumed.state).toBe('running')
    ;(v.clock as FakeClock).advance(120_000)
    const done = await until(async () => {
      const b = await batchOf(second.engine, id)
      return b.state === 'done' ? b : undefined
    }, 30_000)
    expect(done.counts.succeeded).toBe(4)
    // The same submission was polled again: no second one, and no call went live.
    expect(v.openai.submitted).toHaveLength(sent)
    expect(done.providerBatches).toHaveLength(1)
    const live = query<{ n: number }>(
      db,
      "SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed' AND price_version NOT LIKE '%+batch'",
    )
    expect(live[0]!.n).toBe(0)
    // The calls the closing console let go are on the ledger at $0, as a stopped run's are.
    const leftGo = query<{ n: number; cost: number }>(
      db,
      "SELECT COUNT(*) AS n, COALESCE(SUM(cost_micros), 0) AS cost FROM ledger WHERE outcome = 'abandoned'",
    )
    expect(leftGo[0]).toEqual({ n: 4, cost: 0 })
  })
})

describe('whole-batch Cancel and Retry of a batch-API batch from the console', () => {
  it('Cancel cancels the provider batch (finished lines kept, priced); Retry, by ids or whole, goes through the batch API again', async () => {
    const { engine: e, db, vendor: v } = await consoleEngine()
    const { id, clock } = await importViaBatchApi(e, v)
    await until(async () => (await batchOf(e, id)).providerBatches?.[0]?.remoteId, 30_000)
    // Half the lines done, then the whole batch is cancelled.
    clock.advance(1_000 + 30_000)
    const asked = await e.handlers['batches:cancel']({ batchId: id })
    expect(asked.state).toBe('cancelled')
    // The run sees its batch cancelled and asks the vendor to cancel (OpenAI: cancelling first).
    await until(
      async () => (await batchOf(e, id)).providerBatches?.[0]?.status === 'cancelling' || undefined,
      30_000,
    )
    clock.advance(5_000)
    const cancelled = await until(async () => {
      const b = await batchOf(e, id)
      return b.providerBatches?.[0]?.ended && b.counts.running === 0 ? b : undefined
    }, 30_000)
    // Cancelled at the vendor, not left running there (and billed) after the console let go.
    expect(cancelled.providerBatches![0]).toMatchObject({ status: 'cancelled', ended: true })
    expect(cancelled.state).toBe('cancelled')
    expect(cancelled.counts.succeeded).toBe(2)
    const batchRows = () =>
      query<{ n: number; cost: number }>(
        db,
        `SELECT COUNT(*) AS n, COALESCE(SUM(cost_micros), 0) AS cost FROM ledger
         WHERE price_version LIKE '%+batch' AND outcome = 'executed'`,
      )[0]!
    expect(batchRows().n).toBe(2)
    expect(batchRows().cost).toBe(v.billMicros(LIST))
    expect(v.openai.submitted).toHaveLength(4)

    // Retry one task by id: a new provider batch of that one line, nothing live.
    const tasks = await e.handlers['tasks:list']({ batchId: id, offset: 0, limit: 200 })
    const unanswered = tasks.rows.filter((t) => t.status !== 'succeeded')
    expect(unanswered).toHaveLength(2)
    const one = await e.handlers['tasks:retry']({ taskIds: [unanswered[0]!.id] })
    expect(one.retried).toBe(1)
    await until(() => v.openai.submitted.length === 5 || undefined, 30_000)
    clock.advance(120_000)
    await until(
      async () => ((await batchOf(e, id)).counts.succeeded === 3 ? true : undefined),
      30_000,
    )

    // Retry the whole batch: the last line through the batch API too.
    const rest = await e.handlers['tasks:retry']({ batchId: id })
    expect(rest.retried).toBe(1)
    await until(() => v.openai.submitted.length === 6 || undefined, 30_000)
    clock.advance(120_000)
    const done = await until(async () => {
      const b = await batchOf(e, id)
      return b.state === 'done' ? b : undefined
    }, 30_000)
    expect(done.counts.succeeded).toBe(4)
    expect(done.providerBatches).toHaveLength(3)
    const live = query<{ n: number }>(
      db,
      "SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed' AND price_version NOT LIKE '%+batch'",
    )
    expect(live[0]!.n).toBe(0)
    expect(batchRows()).toEqual({ n: 4, cost: v.billMicros(LIST) })
  })
})
