// `npm run bench:follow [-- --tasks N]`: what following the database costs the console's engine
// (EngineEvents.flush, every 200 ms while a console listens) at 10k and 1M tasks: idle (nothing
// committed: one `PRAGMA data_version`) and when another connection moved one batch (the batch
// list re-read and compared). Both should stay flat as the task table grows.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import Database from 'better-sqlite3'
import { createParts } from '../src/main/engine/app/parts'
import { EngineEvents } from '../src/main/engine/app/events'
import type { NewTask } from '../src/main/engine/queue/tasks'

const args = process.argv.slice(2)
const at = (flag: string) => {
  const i = args.indexOf(flag)
  return i >= 0 ? args[i + 1] : undefined
}
const SIZES = at('--tasks') ? [Number(at('--tasks'))] : [10_000, 1_000_000]
const BATCH_TASKS = 250_000
const ROUNDS = 2000

function measure(tasks: number): { idleUs: number; movedUs: number } {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-bench-follow-'))
  const dbPath = path.join(dir, 'pacer.db')
  const parts = createParts({ dbPath })
  try {
    for (let from = 0; from < tasks; from += BATCH_TASKS) {
      const batch: NewTask[] = []
      for (let i = from; i < Math.min(tasks, from + BATCH_TASKS); i++) {
        batch.push({
          seq: i - from + 1,
          type: 'classify',
          payloadJson: `{"i":${i}}`,
          fp: i.toString(16).padStart(64, '0'),
          key: null,
          steps: 1,
          provider: 'sim',
          model: 'sim-small',
        })
      }
      const id = parts.queue.createBatch(
        { name: `bench ${from}`, source: null, sourceHash: null, audit: false },
        batch,
      )
      parts.queue.setBatchState(id, 'done')
    }
    parts.writes.commit()
    // A timer that never fires: flush() is called here, timed.
    const events = new EngineEvents(parts, 3_600_000)
    let announced = 0
    events.subscribe('tasks:changed', (e) => (announced += e.batches.length))
    events.flush()
    let t0 = performance.now()
    for (let i = 0; i < ROUNDS; i++) events.flush()
    const idleUs = ((performance.now() - t0) / ROUNDS) * 1000
    if (announced !== 0) throw new Error(`idle flushes announced ${announced} batches`)
    const other = new Database(dbPath)
    const touch = other.prepare('UPDATE batches SET updated_at = ? WHERE key = 1')
    let moved = 0
    for (let i = 0; i < ROUNDS / 10; i++) {
      touch.run(i + 1)
      t0 = performance.now()
      events.flush()
      moved += performance.now() - t0
    }
    other.close()
    if (announced !== ROUNDS / 10) throw new Error(`announced ${announced}, want ${ROUNDS / 10}`)
    events.close()
    return { idleUs, movedUs: (moved / (ROUNDS / 10)) * 1000 }
  } finally {
    parts.db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

for (const tasks of SIZES) {
  const { idleUs, movedUs } = measure(tasks)
  console.log(
    `${tasks.toLocaleString('en-US')} tasks: idle flush ${idleUs.toFixed(1)} µs, ` +
      `flush after another connection moved a batch ${movedUs.toFixed(1)} µs`,
  )
}
