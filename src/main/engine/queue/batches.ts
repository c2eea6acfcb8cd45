import type Database from 'better-sqlite3'
import { BATCH_TRANSITIONS, type BatchAction } from '../../../shared/batch-states'
import type {
  BatchState,
  BatchSummary,
  ProviderBatchSummary,
  StatusCounts,
  TaskStatus,
} from '../../../shared/contract'
import { TASK_STATUS_CODES, TASK_STATUSES } from '../db/codes'
import { directWrites, type WriteScope } from '../db/step-writes'
import type { Clock } from '../core/types'
import type { OwnerView } from './workers'

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

type BatchDbRow = {
  key: number
  id: string
  name: string
  source: string | null
  source_hash: string | null
  state: BatchState
  audit: number
  created_at: number
  updated_at: number
  stop_reason: string | null
  driver: string | null
  batch_api: number
} & StatusCounts

/**
 * Owns the batches table: a batch's state, driver and summary. Its status counts are columns of
 * the row, kept by task_queue's triggers as tasks change status: no count query per read.
 */
export class BatchTable {
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #writes: WriteScope
  readonly #stmts: ReturnType<typeof prepare>
  readonly #transitions = new Map<string, Database.Statement>()
  readonly #fresh: () => void
  readonly #owner: ((driver: string) => OwnerView) | null
  /** The provider batches of a batch sent through the batch API (the app layer reads them). */
  providerBatches: ((batchId: string) => ProviderBatchSummary[]) | null = null

  /**
   * `fresh` brings the counters up to date before they are read (TaskTable.flushCounters);
   * `owner` tells whether a batch's driver still runs (WorkerRegistry.view).
   */
  constructor(
    db: Database.Database,
    clock: Clock,
    writes: WriteScope = directWrites,
    fresh: () => void = () => {},
    owner: ((driver: string) => OwnerView) | null = null,
  ) {
    this.#db = db
    this.#clock = clock
    this.#writes = writes
    this.#stmts = prepare(db)
    this.#fresh = fresh
    this.#owner = owner
  }

  /** Inserts a batch row and returns its key; the caller holds the transaction that adds its tasks. */
  insert(id: string, batch: NewBatch, now: number): number {
    const info = this.#stmts.insertBatch.run(
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
    return Number(info.lastInsertRowid)
  }

  /** Adds `n` freshly inserted tasks, the first of them `firstTask`, to the batch's counts. */
  addQueued(key: number, n: number, firstTask: number | null): void {
    this.#stmts.addQueued.run(n, firstTask, key)
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

  /** Why the batch's run was stopped, or null. */
  setStopReason(batchId: string, reason: string | null): void {
    this.#stmts.setStopReason.run(reason, batchId)
  }

  /** An operator's action, as BATCH_TRANSITIONS allows it; false (nothing changed) when it does not. */
  applyAction(batchId: string, action: BatchAction): boolean {
    const { from, to } = BATCH_TRANSITIONS[action]
    return this.setState(batchId, to, from)
  }

  /**
   * Marks a batch done when its counters say nothing is left queued or running; returns its state.
   * A read while work remains: the write happens once, when the queue drains.
   */
  settle(batchId: string): BatchState | null {
    const b = this.progress(batchId)
    if (!b) return null
    if (b.unfinished > 0 || (b.state !== 'running' && b.state !== 'interrupted')) return b.state
    this.#writes.run(() => this.#stmts.settleBatch.run(this.#clock.now(), batchId))
    return this.state(batchId)
  }

  progress(batchId: string): { state: BatchState; unfinished: number } | null {
    this.#fresh()
    return (
      (this.#stmts.getSettle.get(batchId) as
        { state: BatchState; unfinished: number } | undefined) ?? null
    )
  }

  /** A running batch none of whose tasks a live worker holds becomes interrupted. */
  interruptIfOrphaned(batchId: string, now: number): void {
    this.#stmts.interruptOrphaned.run(now, batchId, now)
  }

  setDriver(batchId: string, driver: string | null): void {
    this.#stmts.setDriver.run(driver, batchId)
  }

  hasInterrupted(source: string): boolean {
    return this.#stmts.hasInterrupted.get(source) !== undefined
  }

  /** Whether a batch read from `source` is running under another driver than `self`. */
  hasRunning(source: string, self: string): boolean {
    return this.#stmts.hasRunning.get(source, self) !== undefined
  }

  /** The running batches of a file with this content hash, newest first, with their drivers. */
  findRunning(sourceHash: string): { id: string; driver: string | null }[] {
    return this.#stmts.findRunning.all(sourceHash) as { id: string; driver: string | null }[]
  }

  /**
   * Running batches driven by a gone worker become interrupted, for the next run of their file
   * (or a console) to resume; `gone` also stands for every driver with no row in the registry
   * but `self` (a process from before the registry, or one whose row was repaired). Returns their
   * ids.
   */
  interruptDriverless(gone: readonly string[], self: string, now: number): string[] {
    const ids: string[] = []
    for (const driver of gone) {
      for (const r of this.#stmts.interruptDriven.all(now, driver) as { id: string }[]) {
        ids.push(r.id)
      }
    }
    for (const r of this.#stmts.interruptUnregistered.all(now, self) as { id: string }[]) {
      ids.push(r.id)
    }
    return ids
  }

  /** Whether a running batch has a driver that is not registered (cheap: batches are few). */
  anyUnregistered(self: string): boolean {
    return this.#stmts.anyUnregistered.get(self) !== undefined
  }

  /** Marks a batch as sent through the vendors' batch APIs: a resume keeps it there. */
  setBatchApi(batchId: string): void {
    this.#stmts.setBatchApi.run(batchId)
  }

  /** Whether the batch's calls go through the vendors' batch APIs. */
  batchApi(batchId: string): boolean {
    return (this.#stmts.getBatch.get(batchId) as BatchDbRow | undefined)?.batch_api === 1
  }

  setSourceHash(batchId: string, sourceHash: string): void {
    this.#stmts.setSourceHash.run(sourceHash, batchId)
  }

  /** The newest interrupted batch read from a file with this content hash. */
  findResumable(sourceHash: string): string | null {
    const row = this.#stmts.findResumable.get(sourceHash) as { id: string } | undefined
    return row?.id ?? null
  }

  summary(batchId: string): BatchSummary | null {
    this.#fresh()
    const b = this.#stmts.getBatch.get(batchId) as BatchDbRow | undefined
    return b ? this.#summary(b) : null
  }

  list(limit: number): BatchSummary[] {
    this.#fresh()
    return (this.#stmts.listBatches.all(limit) as BatchDbRow[]).map((b) => this.#summary(b))
  }

  counts(batchId: string): StatusCounts {
    this.#fresh()
    const b = this.#stmts.getBatch.get(batchId) as BatchDbRow | undefined
    return b ? countsOf(b) : { ...EMPTY_COUNTS }
  }

  /** How many tasks have one of `statuses` (all when empty), in one batch or in all. */
  countOf(batchId: string | undefined, statuses: readonly TaskStatus[]): number {
    this.#fresh()
    const wanted = statuses.length > 0 ? statuses : TASK_STATUSES
    const rows = (
      batchId === undefined
        ? this.#stmts.allCounts.all()
        : [this.#stmts.getBatch.get(batchId)].filter(Boolean)
    ) as StatusCounts[]
    return rows.reduce((n, r) => n + wanted.reduce((m, s) => m + r[s], 0), 0)
  }

  #summary(b: BatchDbRow): BatchSummary {
    const counts = countsOf(b)
    const total = Object.values(counts).reduce((a, n) => a + n, 0)
    const owner = b.driver !== null && this.#owner ? this.#owner(b.driver) : undefined
    // Running with its driver gone is what it is, whether or not a sweep has written it yet.
    const state = b.state === 'running' && owner && !owner.alive ? 'interrupted' : b.state
    return {
      id: b.id,
      name: b.name,
      source: b.source,
      state,
      audit: b.audit === 1,
      createdAt: b.created_at,
      updatedAt: b.updated_at,
      total,
      counts,
      ...(b.stop_reason ? { stopReason: b.stop_reason } : {}),
      ...(owner ? { owner } : {}),
      ...(b.batch_api === 1 ? this.#viaBatchApi(b.id) : {}),
    }
  }

  #viaBatchApi(batchId: string): Pick<BatchSummary, 'batchApi' | 'providerBatches'> {
    const remote = this.providerBatches?.(batchId) ?? []
    return { batchApi: true, ...(remote.length > 0 ? { providerBatches: remote } : {}) }
  }
}

function countsOf(b: StatusCounts): StatusCounts {
  return {
    queued: b.queued,
    running: b.running,
    succeeded: b.succeeded,
    reused: b.reused,
    failed: b.failed,
    cancelled: b.cancelled,
  }
}

/** The batch table's hot statements, by name: what test/unit/engine/db/query-plans.test.ts checks. */
export const BATCH_SQL = {
  getSettle: `SELECT state, queued + running AS unfinished FROM batches WHERE id = ?`,
  settleBatch: `
    UPDATE batches SET state = 'done', updated_at = ?
    WHERE id = ? AND state IN ('running', 'interrupted') AND queued = 0 AND running = 0`,
  interruptOrphaned: `
    UPDATE batches SET state = 'interrupted', updated_at = ?
    WHERE id = ? AND state = 'running' AND NOT EXISTS (
      SELECT 1 FROM task_queue WHERE batch = batches.key
        AND status = ${TASK_STATUS_CODES.running} AND lease_until >= ?)`,
  getBatch: 'SELECT * FROM batches WHERE id = ?',
  getBatchState: 'SELECT state FROM batches WHERE id = ?',
} as const

function prepare(db: Database.Database) {
  return {
    ...(Object.fromEntries(
      Object.entries(BATCH_SQL).map(([name, sql]) => [name, db.prepare(sql)]),
    ) as { [K in keyof typeof BATCH_SQL]: Database.Statement }),
    insertBatch: db.prepare(
      `INSERT INTO batches(id, driver, name, source, source_hash, state, audit, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    addQueued: db.prepare(
      'UPDATE batches SET queued = queued + ?, first_task = COALESCE(first_task, ?) WHERE key = ?',
    ),
    setDriver: db.prepare('UPDATE batches SET driver = ? WHERE id = ?'),
    setBatchApi: db.prepare('UPDATE batches SET batch_api = 1 WHERE id = ?'),
    setStopReason: db.prepare('UPDATE batches SET stop_reason = ? WHERE id = ?'),
    setSourceHash: db.prepare('UPDATE batches SET source_hash = ? WHERE id = ?'),
    hasInterrupted: db.prepare(
      "SELECT 1 FROM batches WHERE source = ? AND state = 'interrupted' LIMIT 1",
    ),
    hasRunning: db.prepare(
      "SELECT 1 FROM batches WHERE source = ? AND state = 'running' AND driver <> ? LIMIT 1",
    ),
    findRunning: db.prepare(
      `SELECT id, driver FROM batches WHERE source_hash = ? AND state = 'running'
       ORDER BY created_at DESC`,
    ),
    interruptDriven: db.prepare(
      `UPDATE batches SET state = 'interrupted', updated_at = ?
       WHERE state = 'running' AND driver = ? RETURNING id`,
    ),
    interruptUnregistered: db.prepare(
      `UPDATE batches SET state = 'interrupted', updated_at = ?
       WHERE state = 'running' AND driver IS NOT NULL AND driver <> ?
         AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.id = batches.driver) RETURNING id`,
    ),
    anyUnregistered: db.prepare(
      `SELECT 1 FROM batches WHERE state = 'running' AND driver IS NOT NULL AND driver <> ?
         AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.id = batches.driver) LIMIT 1`,
    ),
    setBatchState: db.prepare('UPDATE batches SET state=?, updated_at=? WHERE id=?'),
    findResumable: db.prepare(
      `SELECT id FROM batches WHERE source_hash=? AND state='interrupted'
       ORDER BY created_at DESC LIMIT 1`,
    ),
    listBatches: db.prepare('SELECT * FROM batches ORDER BY created_at DESC LIMIT ?'),
    allCounts: db.prepare(
      `SELECT SUM(queued) AS queued, SUM(running) AS running, SUM(succeeded) AS succeeded,
         SUM(reused) AS reused, SUM(failed) AS failed, SUM(cancelled) AS cancelled FROM batches`,
    ),
  }
}
