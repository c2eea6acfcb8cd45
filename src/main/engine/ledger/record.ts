// The ledger's write side: the row insert, what a recorded event must satisfy, and the cost of the
// execution a reuse saved.
import type Database from 'better-sqlite3'
import { fpKey, OUTCOME_CODES } from '../db/codes'
import type { LedgerRecordInput, LedgerRow } from './ledger'
import type { LedgerOutcome } from '../core/types'

const OUTCOMES: ReadonlySet<string> = new Set<LedgerOutcome>(
  Object.keys(OUTCOME_CODES) as LedgerOutcome[],
)

/**
 * The ledger's write statements (schema v3: ledger_rows holds integer references; the `ledger`
 * view shows the v2 columns). By name, for test/unit/engine/db/query-plans.test.ts.
 */
export const LEDGER_WRITE_SQL = {
  // One statement per row: every reference found by a unique index. A reference seen for the
  // first time matches nothing: the caller adds it (ensure*) and inserts again.
  insert: `
    INSERT INTO ledger_rows (ts, task_id, batch, fp_id, worker, label, step, input_tokens,
      cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, saved_micros, outcome,
      latency_ms, status, epoch, estimated, cache_saved_micros, cache_write_extra_micros, reason,
      batch_saved_micros)
    SELECT @ts, @taskId, nb.id, f.id, nw.id, l.id, @step, @inputTokens, @cachedInputTokens,
      @cacheWriteTokens, @outputTokens, @costMicros, @savedMicros, @outcome, @latencyMs, @status,
      @epoch, @estimated, @cacheSavedMicros, @cacheWriteExtraMicros, @reason, @batchSavedMicros
    FROM fingerprints f, names nw, ledger_labels l LEFT JOIN names nb ON nb.name = @batchId
    WHERE f.fp = @fp AND nw.name = @worker AND l.task_type = @taskType
      AND l.provider = @provider AND l.model = @model AND l.price_version = @priceVersion
      AND (@batchId IS NULL OR nb.id IS NOT NULL)`,
  // The same row with the references the last rows used: a plain append.
  insertKnown: `
    INSERT INTO ledger_rows (ts, task_id, batch, fp_id, worker, label, step, input_tokens,
      cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, saved_micros, outcome,
      latency_ms, status, epoch, estimated, cache_saved_micros, cache_write_extra_micros, reason,
      batch_saved_micros)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  refsOf: 'SELECT batch, worker, label FROM ledger_rows WHERE id = ?',
  ensureName: 'INSERT OR IGNORE INTO names(name) VALUES (?)',
  ensureLabel: `INSERT OR IGNORE INTO ledger_labels(task_type, provider, model, price_version)
    VALUES (?, ?, ?, ?)`,
  ensureFingerprint: 'INSERT OR IGNORE INTO fingerprints(fp) VALUES (?)',
} as const

// The result being reused comes from the fingerprint's latest execution (a re-run after the
// retention window or a takeover is a new execution): sum that one, not every execution ever.
// Through ledger_rows_fp; the runner reads the cost its claim stored instead (claims.ts complete).
export const ORIGINAL_COST_SQL = `
      WITH target AS (SELECT id FROM fingerprints WHERE fp = @fp),
      last AS (
        SELECT task_id, epoch FROM ledger_rows
        WHERE fp_id = (SELECT id FROM target) AND outcome = ${OUTCOME_CODES.executed}
        ORDER BY id DESC LIMIT 1
      )
      SELECT COUNT(*) AS n, COALESCE(SUM(l.cost_micros), 0) AS cost,
        COALESCE(SUM(l.cost_micros IS NULL AND l.input_tokens + l.output_tokens > 0), 0) AS unpriced
      FROM ledger_rows l JOIN last ON l.task_id IS last.task_id AND l.epoch IS last.epoch
      WHERE l.fp_id = (SELECT id FROM target) AND l.outcome = ${OUTCOME_CODES.executed}`

// Whether the result a task found is its own: a task picked again after its end was lost must
// not count that as a reuse. Its own execution produced it (the claim's epoch), or a later epoch
// replayed the journal of the calls it paid (a duplicate took its claim over while it waited for
// its lease to expire: that duplicate's 'replayed' rows already count what was saved).
// Through ledger_rows_fp.
export const OWN_EXECUTION_SQL = `
      SELECT 1 FROM ledger_rows
      WHERE fp_id = @fp AND task_id = @task AND outcome = ${OUTCOME_CODES.executed}
        AND (epoch = @epoch OR (epoch < @epoch AND EXISTS (
          SELECT 1 FROM ledger_rows r
          WHERE r.fp_id = @fp AND r.epoch = @epoch AND r.outcome = ${OUTCOME_CODES.replayed})))
      LIMIT 1`

/** A row as the insert binds it: a stored row's fields but its id, priced. */
export type LedgerRowParams = Omit<LedgerRow, 'id' | 'estimated' | 'reason'> & {
  /** @default 0 */
  estimated?: number
  /** @default null */
  reason?: string | null
  /** The fingerprint's row id, when the caller knows it (the runner's task): saves a lookup. */
  fpId?: number
}

/** The insert of one ledger row: `row` returns the new row's id. */
export interface RowInsert {
  row(row: LedgerRowParams): number
  /** Forgets the references learnt so far: a rolled-back transaction may have taken them along. */
  forget(): void
}

const MAX_CACHED = 10_000

/**
 * Prepares the insert of one ledger row. The references a row needs (its worker's and batch's
 * names, its label) are learnt from the first row that uses them and reused as plain integers:
 * every later row is one append, with no lookup.
 */
export function prepareRowInsert(db: Database.Database): RowInsert {
  const s = {
    known: db.prepare(LEDGER_WRITE_SQL.insertKnown),
    insert: db.prepare(LEDGER_WRITE_SQL.insert),
    refs: db.prepare(LEDGER_WRITE_SQL.refsOf),
    name: db.prepare<[string]>(LEDGER_WRITE_SQL.ensureName),
    label: db.prepare<[string, string, string, string]>(LEDGER_WRITE_SQL.ensureLabel),
    fingerprint: db.prepare<[Buffer | string]>(LEDGER_WRITE_SQL.ensureFingerprint),
  }
  const names = new Map<string, number>()
  const labels = new Map<string, number>()
  const learn = (row: LedgerRowParams, labelKey: string, id: number) => {
    const written = s.refs.get(id) as { batch: number | null; worker: number; label: number }
    if (names.size > MAX_CACHED || labels.size > MAX_CACHED) {
      names.clear()
      labels.clear()
    }
    names.set(row.worker, written.worker)
    if (row.batchId !== null && written.batch !== null) names.set(row.batchId, written.batch)
    labels.set(labelKey, written.label)
  }
  return {
    forget() {
      names.clear()
      labels.clear()
    },
    row(row) {
      const priceVersion = row.priceVersion ?? ''
      const labelKey = `${row.taskType}\u0000${row.provider}\u0000${row.model}\u0000${priceVersion}`
      const workerRef = names.get(row.worker)
      const batchRef = row.batchId === null ? null : names.get(row.batchId)
      const labelRef = labels.get(labelKey)
      const outcome = OUTCOME_CODES[row.outcome]
      if (
        row.fpId !== undefined &&
        workerRef !== undefined &&
        batchRef !== undefined &&
        labelRef !== undefined
      ) {
        const info = s.known.run(
          row.ts,
          row.taskId,
          batchRef,
          row.fpId,
          workerRef,
          labelRef,
          row.step,
          row.inputTokens,
          row.cachedInputTokens,
          row.cacheWriteTokens,
          row.outputTokens,
          row.costMicros,
          row.savedMicros,
          outcome,
          row.latencyMs,
          row.status,
          row.epoch,
          row.estimated ?? 0,
          row.cacheSavedMicros,
          row.cacheWriteExtraMicros,
          row.reason ?? null,
          row.batchSavedMicros ?? null,
        )
        return Number(info.lastInsertRowid)
      }
      const params = {
        ...row,
        fp: fpKey(row.fp),
        outcome,
        priceVersion,
        estimated: row.estimated ?? 0,
        reason: row.reason ?? null,
        batchSavedMicros: row.batchSavedMicros ?? null,
      }
      let info = s.insert.run(params)
      if (info.changes === 0) {
        s.name.run(row.worker)
        if (row.batchId !== null) s.name.run(row.batchId)
        s.label.run(row.taskType, row.provider, row.model, priceVersion)
        s.fingerprint.run(params.fp)
        info = s.insert.run(params)
        if (info.changes !== 1) throw new Error('ledger row not written: a reference is missing')
      }
      const id = Number(info.lastInsertRowid)
      learn(row, labelKey, id)
      return id
    },
  }
}

/** Refuses an event the ledger must not hold, naming the value; pricing checks the usage. */
export function checkRecordInput(e: LedgerRecordInput, ts: number): void {
  if (!Number.isSafeInteger(ts)) {
    throw new TypeError(`ledger event ts must be epoch ms, got ${ts}`)
  }
  if (!OUTCOMES.has(e.outcome)) {
    throw new TypeError(
      `ledger event outcome must be one of ${[...OUTCOMES].join(', ')}, got ${JSON.stringify(e.outcome)}`,
    )
  }
  const { usage } = e
  const tokens = usage.inputTokens + usage.outputTokens
  const saving = e.outcome === 'reused' || e.outcome === 'replayed'
  if (saving && tokens > 0) {
    throw new TypeError(
      `a '${e.outcome}' ledger event makes no provider call and carries no tokens, got ${tokens}`,
    )
  }
  if (!saving && e.savedMicros != null) {
    throw new TypeError(
      `savedMicros belongs on 'reused' and 'replayed' ledger events, got it on '${e.outcome}'`,
    )
  }
  if (e.savedMicros != null && (!Number.isSafeInteger(e.savedMicros) || e.savedMicros < 0)) {
    throw new TypeError(`savedMicros must be integer micro-dollars ≥ 0, got ${e.savedMicros}`)
  }
}
