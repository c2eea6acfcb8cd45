// The batches bench/scale.ts runs, and the SQLite baseline they are measured against.
import { createWriteStream } from 'node:fs'
import type Database from 'better-sqlite3'
import { executionFingerprint, fingerprint } from '../../src/main/engine/core/fingerprint'
import { openDatabase } from '../../src/main/engine/db'
import { MIGRATIONS } from '../../src/main/engine/db/migrations'
import { SIM_DEFAULT_MODEL } from '../../src/main/engine/providers/sim'

const TYPES = ['classify', 'translate', 'extract'] as const
// Coprime with every size used (powers of ten times small numbers): i -> i * P mod n is a shuffle.
const P = 7919

/** The distinct task behind line i of n: each of the n/2 distinct tasks appears exactly twice. */
export function distinctOf(i: number, n: number): number {
  return ((i * P) % n) % (n / 2)
}

/** Line i's task: 50 % duplicates in shuffled order, one task in eight a three-step agent. */
export function taskOf(
  i: number,
  n: number,
): { type: string; payload: { prompt: string }; steps?: number } {
  const d = distinctOf(i, n)
  const task = {
    type: TYPES[d % TYPES.length] as string,
    payload: {
      prompt: `ticket ${d}: the customer writes about order ${d * 7} and asks for a refund`,
    },
  }
  return d % 8 === 0 ? { ...task, steps: 3 } : task
}

/** Writes the n-line JSONL batch to `path`. */
export async function writeBatch(path: string, n: number): Promise<void> {
  const out = createWriteStream(path)
  let chunk: string[] = []
  for (let i = 0; i < n; i++) {
    chunk.push(JSON.stringify(taskOf(i, n)))
    if (chunk.length === 10_000 || i === n - 1) {
      const ok = out.write(`${chunk.join('\n')}\n`)
      chunk = []
      if (!ok) await new Promise<void>((r) => out.once('drain', () => r()))
    }
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  )
}

/** Line i's values as both baselines store them, computed outside the timed inserts. */
interface Line {
  i: number
  d: number
  type: string
  steps: number
  fp: string
  json: string
}

/**
 * Times `insert` over every line of an n-line batch in one transaction on `db`, the lines'
 * values (fingerprints included) computed beforehand a chunk at a time: only SQLite is timed.
 */
function timedInserts(db: Database.Database, n: number, insert: (line: Line) => void): number {
  let ms = 0
  db.exec('BEGIN IMMEDIATE')
  for (let from = 0; from < n; from += 10_000) {
    const lines: Line[] = []
    for (let i = from; i < Math.min(n, from + 10_000); i++) {
      const t = taskOf(i, n)
      const steps = t.steps ?? 1
      const fp = executionFingerprint(fingerprint(t.type, t.payload), {
        provider: 'sim',
        model: SIM_DEFAULT_MODEL,
        steps,
      })
      lines.push({
        i,
        d: distinctOf(i, n),
        type: t.type,
        steps,
        fp,
        json: JSON.stringify(t.payload),
      })
    }
    const started = performance.now()
    for (const line of lines) insert(line)
    ms += performance.now() - started
  }
  const started = performance.now()
  db.exec('COMMIT')
  ms += performance.now() - started
  db.close()
  return ms
}

const BATCH_ROW = `INSERT INTO batches(id, name, state, created_at, updated_at)
  VALUES ('b', 'b', 'running', 0, 0)`

/**
 * SQLite's own cost of storing the same rows `pacer run` stores for the batch, in one transaction
 * on a fresh file of the same schema: the batch, each distinct task's fingerprint row and every
 * line's task row.
 */
export function bulkInsertMs(path: string, n: number): number {
  const db = openDatabase(path)
  const key = Number(db.prepare(BATCH_ROW).run().lastInsertRowid)
  const fpRow = db.prepare(
    `INSERT INTO fingerprints(fp, type, payload, key, steps, provider, model)
     VALUES (?, ?, ?, NULL, ?, 'sim', ?)`,
  )
  const taskRow = db.prepare(
    'INSERT INTO task_queue(batch, seq, fp_id, status) VALUES (?, ?, ?, 0)',
  )
  const ids = new Int32Array(n / 2)
  return timedInserts(db, n, (l) => {
    if (ids[l.d] === 0) {
      const fp = Buffer.from(l.fp, 'hex')
      ids[l.d] = Number(fpRow.run(fp, l.type, l.json, l.steps, SIM_DEFAULT_MODEL).lastInsertRowid)
    }
    taskRow.run(key, l.i + 1, ids[l.d])
  })
}

/**
 * The same lines stored the way Pacer stored them before schema v3 (one `tasks` row per line with
 * its text keys and three indexes): what the issue measured its 9.5 s for a million rows against.
 */
export function bulkInsertV2Ms(path: string, n: number): number {
  const db = openDatabase(path, { migrations: MIGRATIONS.slice(0, 2) })
  db.prepare(BATCH_ROW).run()
  const row = db.prepare(
    `INSERT INTO tasks(batch_id, seq, type, payload, fp, key, steps, provider, model, status, created_at)
     VALUES ('b', ?, ?, ?, ?, NULL, ?, 'sim', ?, 'queued', 0)`,
  )
  return timedInserts(db, n, (l) =>
    row.run(l.i + 1, l.type, l.json, l.fp, l.steps, SIM_DEFAULT_MODEL),
  )
}
