import type Database from 'better-sqlite3'
import { BATCH_TRANSITIONS, type BatchAction } from '../../shared/batch-states'
import type { BatchState, BatchSummary, StatusCounts, TaskStatus } from '../../shared/contract'
import type { Clock } from './types'

export interface NewBatch {
  /** The `pacer run` process driving it; absent for console batches. */
  driver?: string | null
  name: string
  source: string | null
  sourceHash: string | null
  audit: boolean
  state?: BatchState
}

const EMPTY_COUNTS: StatusCounts = {
  queued: 0,
  running: 0,
  succeeded: 0,
  reused: 0,
  failed: 0,
  cancelled: 0,
}

interface BatchDbRow {
  id: string
  name: string
  source: string | null
  source_hash: string | null
  state: BatchState
  audit: number
  created_at: number
  updated_at: number
}

/** Owns the batches table: a batch's state, driver and summary (its task counts included). */
export class BatchTable {
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #stmts: ReturnType<typeof prepare>
  readonly #transitions = new Map<string, Database.Statement>()

  constructor(db: Database.Database, clock: Clock) {
    this.#db = db
    this.#clock = clock
    this.#stmts = prepare(db)
  }

  /** Inserts a batch row; the caller holds the transaction that adds its tasks. */
  insert(id: string, batch: NewBatch, now: number): void {
    this.#stmts.insertBatch.run(
      id,
      batch.driver ?? null,
      batch.name,
      batch.source,
      batch.sourceHash,
      batch.state ?? 'running',
      batch.audit ? 1 : 0,
      now,
      now,
    )
  }

  /** Whether the batch's tasks are recorded for audit (false for an unknown batch). */
  audit(batchId: string): boolean {
    const b = this.#stmts.getBatch.get(batchId) as BatchDbRow | undefined
    return b?.audit === 1
  }

  /** The batch's state, or null if there is no such batch (cheap: one primary-key read). */
  state(batchId: string): BatchState | null {
    const row = this.#stmts.getBatchState.get(batchId) as { state: BatchState } | undefined
    return row?.state ?? null
  }

  /** Sets the state, only from one of `from` when given; true if the row changed. */
  setState(batchId: string, state: BatchState, from?: readonly BatchState[]): boolean {
    const now = this.#clock.now()
    if (from) {
      // Called every poll by the CLI's runner: compile each shape of the statement once.
      const key = from.join(',')
      let stmt = this.#transitions.get(key)
      if (!stmt) {
        const placeholders = from.map(() => '?').join(',')
        stmt = this.#db.prepare(
          `UPDATE batches SET state=?, updated_at=? WHERE id=? AND state IN (${placeholders})`,
        )
        this.#transitions.set(key, stmt)
      }
      return stmt.run(state, now, batchId, ...from).changes === 1
    }
    return this.#stmts.setBatchState.run(state, now, batchId).changes === 1
  }

  /** An operator's action, as BATCH_TRANSITIONS allows it; false (nothing changed) when it does not. */
  applyAction(batchId: string, action: BatchAction): boolean {
    const { from, to } = BATCH_TRANSITIONS[action]
    return this.setState(batchId, to, from)
  }

  /** Marks a batch done when nothing is left queued or running in it; returns its state. */
  settle(batchId: string): BatchState | null {
    this.#stmts.settleBatch.run(this.#clock.now(), batchId, batchId)
    return this.state(batchId)
  }

  /** A running batch none of whose tasks a live worker holds becomes interrupted. */
  interruptIfOrphaned(batchId: string, now: number): void {
    this.#stmts.interruptOrphaned.run(now, batchId, batchId, now)
  }

  setDriver(batchId: string, driver: string | null): void {
    this.#stmts.setDriver.run(driver, batchId)
  }

  /** The newest interrupted batch read from a file with this content hash. */
  findResumable(sourceHash: string): string | null {
    const row = this.#stmts.findResumable.get(sourceHash) as { id: string } | undefined
    return row?.id ?? null
  }

  summary(batchId: string): BatchSummary | null {
    const b = this.#stmts.getBatch.get(batchId) as BatchDbRow | undefined
    return b ? this.#summary(b) : null
  }

  list(limit: number): BatchSummary[] {
    const rows = this.#stmts.listBatches.all(limit) as BatchDbRow[]
    // One GROUP BY for the whole page of batches, not one count query per batch.
    const counts = new Map<string, StatusCounts>()
    for (const r of this.#stmts.countsOfRecent.all(limit) as {
      batch_id: string
      status: TaskStatus
      n: number
    }[]) {
      const c = counts.get(r.batch_id) ?? { ...EMPTY_COUNTS }
      c[r.status] = r.n
      counts.set(r.batch_id, c)
    }
    return rows.map((b) => this.#summary(b, counts.get(b.id) ?? { ...EMPTY_COUNTS }))
  }

  counts(batchId: string): StatusCounts {
    const counts = { ...EMPTY_COUNTS }
    for (const r of this.#stmts.countByStatus.all(batchId) as { status: TaskStatus; n: number }[]) {
      counts[r.status] = r.n
    }
    return counts
  }

  #summary(b: BatchDbRow, counts: StatusCounts = this.counts(b.id)): BatchSummary {
    const total = Object.values(counts).reduce((a, n) => a + n, 0)
    return {
      id: b.id,
      name: b.name,
      source: b.source,
      state: b.state,
      audit: b.audit === 1,
      createdAt: b.created_at,
      updatedAt: b.updated_at,
      total,
      counts,
    }
  }
}

function prepare(db: Database.Database) {
  return {
    insertBatch: db.prepare(
      `INSERT INTO batches(id, driver, name, source, source_hash, state, audit, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getBatch: db.prepare('SELECT * FROM batches WHERE id = ?'),
    getBatchState: db.prepare('SELECT state FROM batches WHERE id = ?'),
    setDriver: db.prepare('UPDATE batches SET driver = ? WHERE id = ?'),
    interruptOrphaned: db.prepare(
      `UPDATE batches SET state='interrupted', updated_at=?
       WHERE id=? AND state='running' AND NOT EXISTS (
         SELECT 1 FROM tasks WHERE batch_id=? AND status='running' AND lease_until >= ?)`,
    ),
    settleBatch: db.prepare(
      `UPDATE batches SET state='done', updated_at=?
       WHERE id=? AND state IN ('running','interrupted')
         AND NOT EXISTS (SELECT 1 FROM tasks WHERE batch_id=? AND status IN ('queued','running'))`,
    ),
    setBatchState: db.prepare('UPDATE batches SET state=?, updated_at=? WHERE id=?'),
    findResumable: db.prepare(
      `SELECT id FROM batches WHERE source_hash=? AND state='interrupted'
       ORDER BY created_at DESC LIMIT 1`,
    ),
    listBatches: db.prepare('SELECT * FROM batches ORDER BY created_at DESC LIMIT ?'),
    countsOfRecent: db.prepare(
      `SELECT batch_id, status, COUNT(*) AS n FROM tasks
       WHERE batch_id IN (SELECT id FROM batches ORDER BY created_at DESC LIMIT ?)
       GROUP BY batch_id, status`,
    ),
    countByStatus: db.prepare(
      'SELECT status, COUNT(*) AS n FROM tasks WHERE batch_id=? GROUP BY status',
    ),
  }
}
