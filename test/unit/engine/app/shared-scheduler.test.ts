// The console's view of pacing across processes: two engines on one SQLite file stand for a
// `pacer run` process driving a batch and a console watching it. The console sees the partition,
// charts it, and its slider moves the limit the other process runs on.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { PartitionView, SchedulerChangedEvent } from '../../../../src/shared/contract'
import { parseBatchFile } from '../../../../src/main/engine/intake/batch-file'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { query, tempDir, until } from '../../../helpers/cli'

const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

function open(dbPath: string, workerId: string, scoped: boolean, latencyScale: number): Engine {
  const engine = createEngine({
    dbPath,
    workerId,
    batchIds: scoped ? [] : null,
    sim: { latencyScale },
    eventIntervalMs: 50,
  })
  engines.push(engine)
  return engine
}

/** A batch this engine drives, as `pacer run` queues one. */
function startBatch(engine: Engine, n: number): string {
  const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ type: 'job', payload: { i } }))
  const parsed = parseBatchFile(lines.join('\n'), 'jsonl').tasks
  const { tasks } = engine.resolve(parsed, { provider: 'sim', model: 'sim-small' })
  const batch = { name: 'jobs', source: null, sourceHash: null, audit: false }
  return engine.enqueue(tasks, { ...batch, driver: engine.runner.workerId })
}

const PARTITION = 'sim:sim-small'

describe("the console's scheduler view spans every process on the database", () => {
  it('shows, charts and tunes a partition that another process drives', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const run = open(dbPath, 'run-a', true, 3)
    const consoleEngine = open(dbPath, 'console', false, 1)
    const events: SchedulerChangedEvent[] = []
    consoleEngine.subscribe('scheduler:changed', (e) => events.push(e))

    const batchId = startBatch(run, 40)
    const drive = run.batches.drive(batchId)

    // The console drives nothing, yet scheduler:get lists the partition with the run's calls.
    const get = async () => (await consoleEngine.handlers['scheduler:get']({})) as PartitionView[]
    const seen = await until(async () => {
      const p = (await get()).find((x) => x.partition === PARTITION)
      return p && p.inflight > 0 ? p : undefined
    })
    expect(seen).toMatchObject({ workers: 1, params: { max: 64 } })
    expect(consoleEngine.scheduler.snapshot()).toEqual([])
    // Its live chart gets samples of it.
    const sample = await until(() =>
      events.flatMap((e) => e.samples).find((s) => s.partition === PARTITION && s.inflight > 0),
    )
    expect(sample.concurrency).toBeGreaterThanOrEqual(sample.inflight)

    // A slider moved in the console writes the shared params; the run picks them up at its
    // next admission and never runs more than 1 call at once from then on.
    const after = (await consoleEngine.handlers['scheduler:set']({
      partition: PARTITION,
      params: { max: 1 },
    })) as PartitionView[]
    expect(after.find((p) => p.partition === PARTITION)).toMatchObject({
      params: { max: 1 },
      limit: 1,
      concurrency: 1,
    })
    await until(() => run.scheduler.getParams(PARTITION).max === 1 || undefined)
    await until(async () => (await get()).find((p) => p.partition === PARTITION)?.inflight === 1)
    // Watched while 3 more calls finish (not for a span of time): never more than 1 at once.
    const finished = run.queue.counts(batchId).succeeded
    let most = 0
    await until(async () => {
      most = Math.max(most, (await get()).find((p) => p.partition === PARTITION)!.inflight)
      return run.queue.counts(batchId).succeeded >= finished + 3
    })
    expect(most).toBeLessThanOrEqual(1)
    const change = await until(() =>
      events.flatMap((e) => e.changes).find((c) => c.partition === PARTITION && c.to === 1),
    )
    expect(change.from).toBeGreaterThan(1)

    run.scheduler.setParams(PARTITION, { max: 12, initial: 6 })
    const end = await drive.done
    expect(end.batch).toMatchObject({ state: 'done', counts: { succeeded: 40 } })
    // Done, and still listed while recent: nothing in flight, the counts of the run.
    const last = (await get()).find((p) => p.partition === PARTITION)
    expect(last).toMatchObject({ inflight: 0, successes: expect.any(Number) })
    expect(last!.successes).toBeGreaterThanOrEqual(40)
    expect(query(dbPath, 'SELECT worker FROM pacing_workers ORDER BY worker')).toEqual([
      { worker: 'console' },
      { worker: 'run-a' },
    ])
  })

  it("'*' tunes every partition shown, those of other processes too, or none if one refuses", async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const run = open(dbPath, 'run-a', true, 0.05)
    const consoleEngine = open(dbPath, 'console', false, 1)
    await run.batches.drive(startBatch(run, 5)).done
    const params = () =>
      JSON.parse(
        query<{ params: string }>(dbPath, 'SELECT params FROM pacing_partitions')[0]!.params,
      ) as { max: number; cooldownMs: number }
    await expect(
      Promise.resolve().then(() =>
        consoleEngine.handlers['scheduler:set']({ partition: '*', params: { min: 80 } }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_input', field: 'params' })
    expect(params().max).toBe(64)
    const view = (await consoleEngine.handlers['scheduler:set']({
      partition: '*',
      params: { cooldownMs: 4321 },
    })) as PartitionView[]
    expect(view).toMatchObject([{ partition: PARTITION, params: { cooldownMs: 4321 } }])
    expect(params().cooldownMs).toBe(4321)
  })

  it('an unknown partition is still refused, naming it', async () => {
    const dbPath = join(tempDir(), 'pacer.db')
    const consoleEngine = open(dbPath, 'console', false, 1)
    await expect(
      Promise.resolve().then(() =>
        consoleEngine.handlers['scheduler:set']({ partition: 'nobody:none', params: { max: 2 } }),
      ),
    ).rejects.toMatchObject({ code: 'not_found', field: 'partition' })
  })
})
