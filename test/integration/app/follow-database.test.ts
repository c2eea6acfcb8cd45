// The console follows the database, not its own process: batches another process writes on the
// same file are announced by this engine's `tasks:changed`, and an idle database costs one pragma.
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { BatchSummary, TasksChangedEvent } from '../../../src/shared/contract'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import { runPacer, tempDir, until, writeJsonl } from '../../helpers/cli'

let engine: Engine | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
})

/** The console's engine on `db`, and every batch its `tasks:changed` announced, in order. */
function watch(db: string): { engine: Engine; seen: BatchSummary[] } {
  const e = createEngine({ dbPath: db, eventIntervalMs: 50 })
  const seen: BatchSummary[] = []
  e.subscribe('tasks:changed', (ev: TasksChangedEvent) => seen.push(...ev.batches))
  return { engine: e, seen }
}

describe('following the database', () => {
  it('announces a batch a separate `pacer run` process queues, runs and finishes', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const w = watch(db)
    engine = w.engine
    const file = writeJsonl(
      dir,
      'other.jsonl',
      Array.from({ length: 40 }, (_, i) => ({ type: 'other', payload: { i } })),
    )
    const run = await runPacer(['run', file, '--db', db, '--json', '--sim-latency-scale', '0.2'])
    expect(run.code, run.stderr).toBe(0)
    const done = await until(
      () => w.seen.find((b) => b.name.includes('other') && b.state === 'done'),
      5000,
    )
    expect(done.counts.succeeded).toBe(40)
    expect(done.total).toBe(40)
  }, 60_000)

  it('announces a state written by a second connection, once', async () => {
    const db = join(tempDir(), 'pacer.db')
    const w = watch(db)
    engine = w.engine
    const other = new Database(db)
    const write = (sql: string) => other.prepare(sql).run()
    write(`INSERT INTO batches(id, name, state, created_at, updated_at, queued)
      VALUES ('b-other', 'written elsewhere', 'running', 1, 1, 3)`)
    const appeared = await until(() => w.seen.find((b) => b.id === 'b-other'), 2000)
    expect(appeared).toMatchObject({ state: 'running', total: 3 })
    w.seen.length = 0
    write("UPDATE batches SET state = 'cancelled', updated_at = 2, queued = 0, cancelled = 3")
    other.close()
    const batchId = 'b-other'
    const cancelled = await until(
      () => w.seen.find((b) => b.id === batchId && b.state === 'cancelled'),
      2000,
    )
    expect(cancelled.counts.cancelled).toBe(3)
    await new Promise((r) => setTimeout(r, 300))
    expect(w.seen.filter((b) => b.id === batchId)).toHaveLength(1)
  })

  it('reads no batch while the database does not move', async () => {
    const db = join(tempDir(), 'pacer.db')
    const w = watch(db)
    engine = w.engine
    await new Promise((r) => setTimeout(r, 200))
    const reads = vi.spyOn(w.engine.queue, 'listBatches')
    await new Promise((r) => setTimeout(r, 500))
    expect(reads).not.toHaveBeenCalled()
    expect(w.seen).toEqual([])
  })
})
