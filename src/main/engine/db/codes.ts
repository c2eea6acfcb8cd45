// How the compact tables (schema v3) encode what the contract names in words: task statuses and
// ledger outcomes as small integers, fingerprints as 32 bytes. The views `tasks`, `claims` and
// `ledger` turn them back into the words and hex strings every earlier query reads.
import type { TaskStatus } from '../../../shared/contract'
import type { LedgerOutcome } from '../core/types'

/** task_queue.status: one byte per task, and in the pick index, instead of a word. */
export const TASK_STATUS_CODES: Readonly<Record<TaskStatus, number>> = Object.freeze({
  queued: 0,
  running: 1,
  succeeded: 2,
  reused: 3,
  failed: 4,
  cancelled: 5,
})

export const TASK_STATUSES = Object.keys(TASK_STATUS_CODES) as TaskStatus[]

/** ledger_rows.outcome. */
export const OUTCOME_CODES: Readonly<Record<LedgerOutcome, number>> = Object.freeze({
  executed: 1,
  reused: 2,
  duplicate: 3,
  throttled: 4,
  error: 5,
  abandoned: 6,
  // A call aborted at its own deadline (migration 8): no answer, maybe billed, usage unknown.
  timeout: 7,
  // A call the execution's journal answered (migration 9): nothing sent, its cost saved.
  replayed: 8,
})

export function taskStatusOf(code: number): TaskStatus {
  const status = TASK_STATUSES[code]
  if (status === undefined) throw new Error(`unknown task status code ${code}`)
  return status
}

/** SQL turning the code in `column` back into its word (NULL for an unknown code). */
export function codeToWordSql(codes: Readonly<Record<string, number>>, column: string): string {
  const whens = Object.entries(codes).map(([word, code]) => `WHEN ${code} THEN '${word}'`)
  return `CASE ${column} ${whens.join(' ')} END`
}

/** SQL turning the word in `column` into its code (NULL for an unknown word). */
export function wordToCodeSql(codes: Readonly<Record<string, number>>, column: string): string {
  const whens = Object.entries(codes).map(([word, code]) => `WHEN '${word}' THEN ${code}`)
  return `CASE ${column} ${whens.join(' ')} END`
}

/** A sha256 digest as lowercase hex: 64 of [0-9a-f]. */
function isSha256Hex(fp: string): boolean {
  if (fp.length !== 64) return false
  for (let i = 0; i < 64; i++) {
    const c = fp.charCodeAt(i)
    // '0'-'9' or 'a'-'f'
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false
  }
  return true
}

// The digests converted last, by hex: a task's claim, its renewal at each answer, its completion
// and its result's lookup each ask for the same key (a regex and a hex decode a time, ~1 µs).
// Two generations instead of a map kept in insertion order: deleting a map's oldest entry one at a
// time leaves the deleted slots at its head for the next look to walk over (~2.5 µs a task in a
// 100k profile). The buffers are only ever bound, never written.
const RECENT_KEYS = 4096
let youngKeys = new Map<string, Buffer>()
let oldKeys = new Map<string, Buffer>()

/**
 * A fingerprint as stored: a sha256 hex digest as its 32 bytes (half the size, in the table and in
 * its unique index); any other identity (tests, hand-made keys) as the text it is. Blobs and texts
 * never compare equal in SQLite, so the two kinds cannot collide.
 */
export function fpKey(fp: string): Buffer | string {
  const known = youngKeys.get(fp) ?? oldKeys.get(fp)
  if (known !== undefined) return known
  const key = fpKeyOnce(fp)
  if (typeof key !== 'string') remember(fp, key)
  return key
}

/** fpKey() of a fingerprint not asked for again soon (a task being queued): not kept. */
export function fpKeyOnce(fp: string): Buffer | string {
  return isSha256Hex(fp) ? Buffer.from(fp, 'hex') : fp
}

function remember(fp: string, key: Buffer): void {
  if (youngKeys.size >= RECENT_KEYS) {
    oldKeys = youngKeys
    youngKeys = new Map()
  }
  youngKeys.set(fp, key)
}

/**
 * fpText() of a fingerprint just read to be worked on (a picked task): its key is kept, so the
 * claim, renewals and completion that follow bind the bytes read instead of decoding the hex again
 * (the pick is the first to see it after enqueue: ~2 µs a task).
 */
export function fpTextKept(stored: Buffer | string): string {
  if (typeof stored === 'string') return stored
  const fp = stored.toString('hex')
  remember(fp, stored)
  return fp
}

/** The fingerprint as the contract shows it: the hex digest (or the text it was given as). */
export function fpText(stored: Buffer | string): string {
  return typeof stored === 'string' ? stored : stored.toString('hex')
}

/** fpKey() in SQL, for migrations and the compatibility views' INSTEAD OF triggers. */
export function fpKeySql(column: string): string {
  return `CASE WHEN length(${column}) = 64 AND NOT ${column} GLOB '*[^0-9a-f]*'
    THEN unhex(${column}) ELSE ${column} END`
}

/** fpText() in SQL, for the compatibility views. */
export function fpTextSql(column: string): string {
  return `CASE WHEN typeof(${column}) = 'blob' THEN lower(hex(${column})) ELSE ${column} END`
}
