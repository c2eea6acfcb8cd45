// The SQLite pacing store's statements and rows (store-sqlite.ts runs them): a partition's record
// in pacing_partitions, each worker's slots, waiting calls and lease in pacing_workers.
import type Database from 'better-sqlite3'
import type { AimdParams, LimitChange } from '../core/types'
import type { ControllerState, PacingRecord, PacingView } from './store'
import type { LearnedPaces } from './learned-pace'

export interface PartitionRow {
  partition: string
  params: string
  limit_value: number
  last_cut_at: number | null
  memory: string | null
  concurrency: number
  paused_until: number
  last_change: string | null
  /** The learned paces (learned-pace.ts) as JSON, migration 19; null: nothing learned. */
  learned: string | null
  version: number
}

export interface CheckRow {
  version: number
  concurrency: number
  pausedUntil: number
  inflight: number
  othersWaiting: number
  waitingWorkers: number
  mine: number
  /** Other workers under a live lease with slots or waiting calls: a lessee hands its block back. */
  othersActive: number
  /** Successes of every worker's calls in this session: the partition's total (partition-oks.ts). */
  oks: number
  /** The shared announced budget's text (store-sqlite-budget.ts): read with the counts, no second read. */
  budget: string | null
}

export type ViewRow = PartitionRow & Omit<PacingView, 'record'>

const liveSlots = `SELECT COALESCE(SUM(slots), 0) FROM pacing_workers
   WHERE partition = @partition AND (lease_until >= @now OR worker = @worker)`
// One pass over the partition's worker rows. A worker's own slots always count for itself,
// even if its lease ran out unnoticed; the others' only under a live lease.
const other = 'w.worker <> @worker AND w.lease_until >= @now'

/** The pacing store's statements, by name. */
export const PACING_SQL = {
  check: `SELECT p.version, p.concurrency, p.paused_until AS pausedUntil,
       COALESCE(SUM(CASE WHEN w.worker = @worker OR w.lease_until >= @now THEN w.slots END), 0)
         AS inflight,
       COALESCE(SUM(CASE WHEN ${other} THEN w.waiting END), 0) AS othersWaiting,
       COUNT(CASE WHEN ${other} AND w.waiting > 0 THEN 1 END) AS waitingWorkers,
       COALESCE(MAX(CASE WHEN w.worker = @worker THEN w.slots END), 0) AS mine,
       COUNT(CASE WHEN ${other} AND (w.slots > 0 OR w.waiting > 0) THEN 1 END) AS othersActive,
       COALESCE(SUM(w.successes), 0) AS oks, p.budget
     FROM pacing_partitions p LEFT JOIN pacing_workers w ON w.partition = p.partition
     WHERE p.partition = @partition GROUP BY p.partition`,
  row: 'SELECT * FROM pacing_partitions WHERE partition = ?',
  // The check and the take are one statement: no other process can slip in between.
  take: `INSERT INTO pacing_workers(partition, worker, slots, waiting, lease_until)
     SELECT @partition, @worker, 1, @waiting, @leaseUntil
     WHERE (${liveSlots}) < (SELECT concurrency FROM pacing_partitions
                             WHERE partition = @partition AND paused_until <= @now)
     ON CONFLICT(partition, worker) DO UPDATE SET slots = slots + 1,
       waiting = excluded.waiting, lease_until = excluded.lease_until`,
  free: `INSERT INTO pacing_workers(partition, worker, slots, waiting, lease_until, throttles,
       successes, errors)
     VALUES (@partition, @worker, 0, @waiting, @leaseUntil, @throttles, @successes, @errors)
     ON CONFLICT(partition, worker) DO UPDATE SET slots = MAX(0, slots - @freed),
       waiting = excluded.waiting, lease_until = excluded.lease_until,
       throttles = throttles + excluded.throttles, successes = successes + excluded.successes,
       errors = errors + excluded.errors`,
  change: `UPDATE pacing_partitions SET params = @params, limit_value = @limit,
       last_cut_at = @lastCutAt, memory = @memory, concurrency = @concurrency,
       paused_until = @pausedUntil, last_change = @lastChange, learned = @learned,
       version = @version, budget = COALESCE(@budget, budget)
     WHERE partition = @partition`,
  write: `INSERT INTO pacing_partitions(partition, params, limit_value, last_cut_at, memory,
       concurrency, paused_until, last_change, learned, version, session_at)
     VALUES (@partition, @params, @limit, @lastCutAt, @memory, @concurrency, @pausedUntil,
       @lastChange, @learned, @version, @now)
     ON CONFLICT(partition) DO UPDATE SET params = excluded.params,
       limit_value = excluded.limit_value, last_cut_at = excluded.last_cut_at,
       memory = excluded.memory, concurrency = excluded.concurrency,
       paused_until = excluded.paused_until, last_change = excluded.last_change,
       learned = excluded.learned, version = excluded.version, session_at = excluded.session_at`,
  live: `SELECT COUNT(*) AS n FROM pacing_workers WHERE partition = @partition AND lease_until >= @now`,
  drop: 'DELETE FROM pacing_workers WHERE partition = ?',
  lease: `INSERT INTO pacing_workers(partition, worker, slots, waiting, lease_until)
     VALUES (@partition, @worker, COALESCE(@slots, 0), COALESCE(@waiting, 0), @leaseUntil)
     ON CONFLICT(partition, worker) DO UPDATE SET lease_until = excluded.lease_until,
       slots = COALESCE(@slots, slots), waiting = COALESCE(@waiting, waiting)`,
  views: `SELECT p.*,
       COALESCE(SUM(CASE WHEN w.lease_until >= @now THEN w.slots END), 0) AS inflight,
       COALESCE(SUM(CASE WHEN w.lease_until >= @now THEN w.waiting END), 0) AS waiting,
       COALESCE(SUM(w.throttles), 0) AS throttles, COALESCE(SUM(w.successes), 0) AS successes,
       COALESCE(SUM(w.errors), 0) AS errors, COALESCE(SUM(w.lease_until >= @now), 0) AS workers,
       COALESCE(MAX(w.lease_until), 0) AS activeUntil
     FROM pacing_partitions p LEFT JOIN pacing_workers w ON w.partition = p.partition
     GROUP BY p.partition HAVING activeUntil >= @since
     ORDER BY p.session_at, p.partition`,
} as const

/** A partition's record as its row holds it. */
export function recordOf(row: PartitionRow): PacingRecord {
  return {
    partition: row.partition,
    params: JSON.parse(row.params) as AimdParams,
    controller: {
      limit: row.limit_value,
      lastCutAt: row.last_cut_at,
      memory: row.memory === null ? null : (JSON.parse(row.memory) as ControllerState['memory']),
    },
    concurrency: row.concurrency,
    pausedUntil: row.paused_until,
    lastChange: row.last_change === null ? null : (JSON.parse(row.last_change) as LimitChange),
    ...(row.learned ? { learned: JSON.parse(row.learned) as LearnedPaces } : {}),
    version: row.version,
  }
}

/** A partition's view as its row and its workers' rows hold it. */
export function viewOf(row: ViewRow, record: PacingRecord): PacingView {
  return {
    record,
    inflight: row.inflight,
    waiting: row.waiting,
    throttles: row.throttles,
    successes: row.successes,
    errors: row.errors,
    workers: row.workers,
    activeUntil: row.activeUntil,
  }
}

/** A function run as one IMMEDIATE transaction: it takes the write lock before its first read. */
export function inTransaction<A extends unknown[], R>(
  db: Database.Database,
  fn: (...args: A) => R,
): (...args: A) => R {
  const tx = db.transaction(fn)
  return (...args: A) => tx.immediate(...args)
}

/** A record as its row's statements take it; `json` may reuse the text of an unchanged part. */
export function rowArgs(
  record: PacingRecord,
  json: (value: object) => string,
): Record<string, string | number | null> {
  return {
    partition: record.partition,
    params: json(record.params),
    limit: record.controller.limit,
    lastCutAt: record.controller.lastCutAt,
    memory: record.controller.memory === null ? null : JSON.stringify(record.controller.memory),
    concurrency: record.concurrency,
    pausedUntil: record.pausedUntil,
    lastChange: record.lastChange === null ? null : json(record.lastChange),
    learned: record.learned ? JSON.stringify(record.learned) : null,
    version: record.version,
  }
}
