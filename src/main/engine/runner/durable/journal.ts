// The call journal (migration 9): each effect of an execution, by execution fingerprint and call
// index, kept until the execution's result is stored. A provider call is written as an intent
// before its request goes out and answered in the transaction of its ledger row; a rerun of the
// execution (resume after Ctrl-C, takeover after a crash, retry after a later call failed) reads
// it back and replays what matches (runner/effects-journal.ts).
import { hash } from 'node:crypto'
import type Database from 'better-sqlite3'
import { stringifyExact } from '../../../../shared/exact-json'
import { directWrites, type WriteScope } from '../../db/step-writes'

/** call_journal.kind. */
export const EFFECT_KINDS = { call: 1, step: 2 } as const
export type EffectKind = keyof typeof EFFECT_KINDS

/** call_journal.state: sent (an intent: the request went out, no answer written yet), answered. */
export const ENTRY_STATES = { sent: 0, answered: 1 } as const

/** The journal's statements, by name (db/hot-queries.ts checks their plans). */
export const JOURNAL_SQL = {
  entries: `SELECT idx, kind, hash, state, epoch, body, cost_micros AS costMicros
    FROM call_journal WHERE fp_id = ? ORDER BY idx`,
  // An intent and an answer are the same row at two states: a call's answer updates its intent in
  // place (a replace would delete and insert); a step, which has no intent, inserts its answer.
  // Fenced: only the epoch that owns the claim writes, so a stale owner cannot overwrite the
  // entries of the execution that took over. Positional (fp_id and epoch bound twice): named
  // parameters cost a property lookup each, on a statement run before every request.
  write: `INSERT OR REPLACE INTO call_journal
    (fp_id, idx, kind, hash, state, epoch, task_id, ts, body, cost_micros)
    SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
    WHERE (SELECT epoch FROM fingerprints WHERE id = ?) = ?`,
  answer: `UPDATE call_journal SET state = ${ENTRY_STATES.answered}, body = ?, cost_micros = ?
    WHERE fp_id = ? AND idx = ?`,
  dropFrom: 'DELETE FROM call_journal WHERE fp_id = ? AND idx >= ?',
  // A request that got no usable answer: this epoch's intent is void (a stale owner's call
  // cannot remove the intent of the execution that took over).
  forget: 'DELETE FROM call_journal WHERE fp_id = ? AND idx = ? AND epoch = ? AND state = 0',
  dropAll: 'DELETE FROM call_journal WHERE fp_id = ?',
  // The executions whose results a transaction stored, dropped in one statement before it commits.
  dropMany: 'DELETE FROM call_journal WHERE fp_id IN (SELECT value FROM json_each(?))',
} as const

/** One journaled effect, as a rerun reads it. */
export interface JournalEntry {
  idx: number
  kind: number
  hash: Buffer
  state: number
  /** The claim epoch that wrote it. */
  epoch: number | null
  /** Answered: the answer as JSON (a call's JournaledAnswer, a step's value). */
  body: string | null
  costMicros: number | null
}

/** What a journaled call answered: enough to hand the same answer back without calling again. */
export interface JournaledAnswer {
  text: string
  message: unknown
  finishReason: string | null
  usage: {
    inputTokens: number
    cachedInputTokens: number
    cacheWriteTokens: number
    outputTokens: number
  }
  model: string
  provider: string
}

/** Where an entry is written: the execution, the call index, and who wrote it. */
export interface EntryKey {
  fpId: number
  idx: number
  kind: EffectKind
  hash: Buffer
  epoch: number | null
  taskId: number
  ts: number
}

/**
 * The digest that decides whether a rerun's request is the journaled one: 16 bytes of sha256 over
 * the kind and the request as JSON (the messages, model, provider and params as sent; a step's
 * name). The same code builds the same objects in the same key order, so JSON.stringify is exact
 * enough and ~5× cheaper than canonical JSON for a long conversation.
 */
export function requestHash(kind: EffectKind, request: unknown): Buffer {
  // One-shot hash: no Hash object per call.
  return hash('sha256', `${kind}\u0000${stringifyExact(request)}`, 'buffer').subarray(0, 16)
}

/** The journal's reads and writes, through the runner's write scope. */
export class CallJournal {
  readonly #writes: WriteScope
  readonly #entries: Database.Statement<[number], JournalEntry>
  readonly #write: Database.Statement
  readonly #answer: Database.Statement<[string, number | null, number, number]>
  readonly #dropFrom: Database.Statement<[number, number]>
  readonly #forget: Database.Statement<[number, number, number | null]>
  readonly #dropAll: Database.Statement<[number]>
  readonly #dropMany: Database.Statement<[string]>
  /**
   * Executions whose results the open transaction stored: their entries are deleted together
   * just before it commits (the scope's beforeCommit hook), so they go in the transaction of
   * their results as before, for one statement per commit instead of one per execution. A read
   * or write of the same execution first deletes its own, so nothing sees them or goes with them.
   */
  readonly #dropping = new Set<number>()

  constructor(db: Database.Database, writes: WriteScope = directWrites) {
    this.#writes = writes
    this.#entries = db.prepare(JOURNAL_SQL.entries)
    this.#write = db.prepare(JOURNAL_SQL.write)
    this.#answer = db.prepare(JOURNAL_SQL.answer)
    this.#dropFrom = db.prepare(JOURNAL_SQL.dropFrom)
    this.#forget = db.prepare(JOURNAL_SQL.forget)
    this.#dropAll = db.prepare(JOURNAL_SQL.dropAll)
    this.#dropMany = db.prepare(JOURNAL_SQL.dropMany)
    // A scope that commits by itself runs the drops in its transaction; others drop at once.
    if (writes.beforeCommit && writes.onRollback) {
      writes.beforeCommit(() => this.#flushDrops())
      writes.onRollback(() => this.#dropping.clear())
    }
  }

  /** The execution's entries by index: what an earlier run of it journaled. */
  entries(fpId: number): Map<number, JournalEntry> {
    this.#dropNow(fpId)
    const out = new Map<number, JournalEntry>()
    for (const e of this.#entries.all(fpId)) out.set(e.idx, e)
    return out
  }

  /** The request is about to go out: if the process dies before its answer is written, a rerun knows. */
  intent(key: EntryKey): void {
    this.#put(key, ENTRY_STATES.sent, null, null)
  }

  /**
   * The answer, in the write scope of its ledger row (call it inside the same `run`): over its
   * intent when it has one (a provider call), else as a new entry (a step).
   */
  answer(key: EntryKey, body: string, costMicros: number | null): void {
    this.#writes.run(() => {
      this.#dropNow(key.fpId)
      if (this.#answer.run(body, costMicros, key.fpId, key.idx).changes === 0) {
        this.#put(key, ENTRY_STATES.answered, body, costMicros)
      }
    })
  }

  /** Forgets the entries from `idx` on: a diverging rerun writes its own. */
  dropFrom(fpId: number, idx: number): void {
    this.#writes.run(() => {
      this.#dropNow(fpId)
      this.#dropFrom.run(fpId, idx)
    })
  }

  /** The request got no usable answer (on the ledger as such): its intent is void. */
  forget(key: Pick<EntryKey, 'fpId' | 'idx' | 'epoch'>): void {
    this.#writes.run(() => {
      this.#dropNow(key.fpId)
      this.#forget.run(key.fpId, key.idx, key.epoch)
    })
  }

  /** Forgets the execution: its result is stored (the ledger keeps each call). */
  drop(fpId: number): void {
    this.#writes.run(() => {
      if (this.#writes.owns?.()) this.#dropping.add(fpId)
      else this.#dropAll.run(fpId)
    })
  }

  /** The execution's drop, if it waits for the commit, done now (its entries are in use). */
  #dropNow(fpId: number): void {
    if (this.#dropping.delete(fpId)) this.#dropAll.run(fpId)
  }

  #flushDrops(): void {
    if (this.#dropping.size === 0) return
    const ids = [...this.#dropping]
    this.#dropping.clear()
    if (ids.length === 1) this.#dropAll.run(ids[0]!)
    else this.#dropMany.run(JSON.stringify(ids))
  }

  #put(key: EntryKey, state: number, body: string | null, cost: number | null): void {
    this.#writes.run(() => {
      const { fpId, epoch } = key
      this.#dropNow(fpId)
      const kind = EFFECT_KINDS[key.kind]
      this.#write.run(
        fpId,
        key.idx,
        kind,
        key.hash,
        state,
        epoch,
        key.taskId,
        key.ts,
        body,
        cost,
        fpId,
        epoch,
      )
    })
  }
}
