import { EventEmitter } from 'node:events'
import type Database from 'better-sqlite3'
import { CLAIM_SQL } from './claims-sql'
import { waitForClaim, type WaitStep } from './wait'
import { fpKey } from '../db/codes'
import { lostEpochsOf, type LostEpochs } from './lost-epochs'
import { directWrites, type WriteScope } from '../db/step-writes'
import {
  systemClock,
  type ClaimAttempt,
  type ClaimStore,
  type Clock,
  type StoredResult,
  type StoredStatus,
  type WaitOutcome,
} from '../core/types'

export interface SqliteClaimStoreOptions {
  /** An open Pacer database (db/index.ts openDatabase): WAL, busy_timeout, schema v1+. */
  db: Database.Database
  /** @default systemClock */
  clock?: Clock
  /** How long a completed result is reused; 0 = forever. The seed used 900 s. @default 86_400_000 */
  resultTtlMs?: number
  /** First cross-process poll interval of wait(); doubles up to pollMaxMs. @default 25 */
  pollMinMs?: number
  /** @default 1000 */
  pollMaxMs?: number
  /** Groups the writes of a task step into one transaction (the engine's). @default one per statement */
  writes?: WriteScope
  /**
   * Hand out a truncated answer (the output cap cut it) to duplicates like any other; otherwise a
   * duplicate executes again. @default false
   */
  acceptTruncated?: boolean
}

type ClaimState = 'running' | 'completed' | 'released'

interface ClaimRow {
  /** NULL: a fingerprint queued but never claimed. */
  state: ClaimState | null
  status: StoredResult['status'] | null
  owner: string
  epoch: number
  lease_until: number
  result: string | null
  result_id: number | null
  cost_micros: number | null
  completed_at: number | null
}

/** A fingerprint as stored (db/codes.ts fpKey). */
type Key = Buffer | string

// A lost compare-and-set means another worker moved the row forward; re-reading settles it within
// two or three rounds. The bound only turns a bug into an error instead of a hang.
const MAX_CAS_ROUNDS = 16

// One doorbell per connection, so every store built on the same handle wakes the others' waiters.
const doorbells = new WeakMap<Database.Database, EventEmitter>()

function doorbellFor(db: Database.Database): EventEmitter {
  let bell = doorbells.get(db)
  if (bell === undefined) {
    bell = new EventEmitter()
    // Any number of tasks may wait on one popular fingerprint.
    bell.setMaxListeners(0)
    doorbells.set(db, bell)
  }
  return bell
}

/**
 * The SQLite idempotency store: claims with leases and epoch fencing, shared safely by every thread
 * and process that opens the same database file.
 */
export class SqliteClaimStore implements ClaimStore {
  readonly #clock: Clock
  readonly #pollMinMs: number
  readonly #pollMaxMs: number
  readonly #doorbell: EventEmitter
  readonly #writes: WriteScope
  /** Results just stored by complete(), by fingerprint, until resultRef() takes them. */
  readonly #stored = new Map<string, number>()
  readonly #resultRef: Database.Statement<[Key], { result_id: number | null }>
  #resultTtlMs: number
  /** Whether a 'truncated' result is reused (settable while running, like the retention). */
  acceptTruncated: boolean

  readonly #claimQueued: Database.Statement<[string, number, number, Key], { epoch: number }>
  readonly #insert: Database.Statement<[Key, string, number, number]>
  readonly #select: Database.Statement<[Key], ClaimRow>
  readonly #holds: Database.Statement<[Key], Pick<ClaimRow, 'state' | 'status' | 'completed_at'>>
  readonly #reclaim: Database.Statement<[string, number, number, Key, number, ClaimState]>
  readonly #takeOver: Database.Statement<[string, number, number, Key, number, number]>
  readonly #renew: Database.Statement<[number, Key, number]>
  readonly #raiseEpoch: Database.Statement<[number, Key, number]>
  readonly #lostEpochs: LostEpochs
  readonly #complete: CompleteFn
  readonly #release: Database.Statement<[number, Key, number]>
  readonly #forgetFailure: Database.Statement<[Key]>

  constructor({
    db,
    clock = systemClock,
    resultTtlMs = 86_400_000,
    pollMinMs = 25,
    pollMaxMs = 1000,
    writes = directWrites,
    acceptTruncated = false,
  }: SqliteClaimStoreOptions) {
    checkMs('resultTtlMs', resultTtlMs, 0)
    checkMs('pollMinMs', pollMinMs, 1)
    checkMs('pollMaxMs', pollMaxMs, pollMinMs)
    this.#clock = clock
    this.#resultTtlMs = resultTtlMs
    this.acceptTruncated = acceptTruncated
    this.#pollMinMs = pollMinMs
    this.#pollMaxMs = pollMaxMs
    this.#doorbell = doorbellFor(db)

    this.#writes = writes
    this.#claimQueued = db.prepare(CLAIM_SQL.claimQueued)
    this.#insert = db.prepare(CLAIM_SQL.claim)
    this.#select = db.prepare(CLAIM_SQL.select)
    this.#holds = db.prepare(CLAIM_SQL.stored)
    this.#reclaim = db.prepare(CLAIM_SQL.reclaim)
    this.#takeOver = db.prepare(CLAIM_SQL.takeOver)
    this.#renew = db.prepare(CLAIM_SQL.renew)
    this.#raiseEpoch = db.prepare(CLAIM_SQL.raiseEpoch)
    this.#lostEpochs = lostEpochsOf(db, writes)
    const insertResult = db.prepare<[string]>(CLAIM_SQL.insertResult)
    const complete = db.prepare(CLAIM_SQL.complete)
    const dropResult = db.prepare<[number]>(CLAIM_SQL.dropResult)
    // The result row and the claim's pointer at it, together or not at all. In the scope's open
    // transaction without a savepoint (a SAVEPOINT and a RELEASE fewer per execution): a fenced
    // out (or failed) completion deletes its own result row instead of rolling back to one.
    const completeIn: CompleteFn = (key, epoch, result, status, cost, now) => {
      const ref = Number(insertResult.run(result).lastInsertRowid)
      let done = false
      try {
        done = complete.run(status, ref, cost, now, key, epoch).changes === 1
      } finally {
        if (!done && db.inTransaction) dropResult.run(ref)
      }
      return done ? ref : null
    }
    const atomic = db.transaction(completeIn)
    this.#complete = (...args) => (db.inTransaction ? completeIn(...args) : atomic(...args))
    this.#resultRef = db.prepare(CLAIM_SQL.resultRef)
    this.#forgetFailure = db.prepare(CLAIM_SQL.forgetFailure)
    this.#release = db.prepare(CLAIM_SQL.release)
  }

  /** How long a completed result is reused (0 = forever); changeable while running. */
  get resultTtlMs(): number {
    return this.#resultTtlMs
  }

  set resultTtlMs(ms: number) {
    checkMs('resultTtlMs', ms, 0)
    this.#resultTtlMs = ms
  }

  /** Atomic insert-or-ignore claim; on conflict reports the completed result or the busy owner. */
  claim(fp: string, owner: string, leaseMs: number): ClaimAttempt {
    checkMs('leaseMs', leaseMs, 1)
    const key = fpKey(fp)
    return this.#writes.run(() => {
      const attempt = this.#claim(key, fp, owner, leaseMs)
      return attempt.kind === 'owned' ? this.#fence(fp, key, attempt) : attempt
    })
  }

  /** An owned claim's epoch, raised above any a rolled-back transaction took (lost-epochs.ts). */
  #fence<T extends { epoch: number }>(fp: string, key: Key, owned: T): T {
    const above = this.#lostEpochs.above(fp, owned.epoch)
    if (above !== undefined) this.#raiseEpoch.run(above, key, owned.epoch)
    const fenced = above === undefined ? owned : { ...owned, epoch: above }
    this.#lostEpochs.handedOut(fp, fenced.epoch)
    return fenced
  }

  #claim(key: Key, fp: string, owner: string, leaseMs: number): ClaimAttempt {
    for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
      const now = this.#clock.now()
      if (this.#claimQueued.get(owner, now + leaseMs, now, key) !== undefined) {
        return { kind: 'owned', epoch: 1, tookOver: false }
      }
      const row = this.#select.get(key)
      if (row === undefined) {
        if (this.#insert.run(key, owner, now + leaseMs, now).changes === 1) {
          return { kind: 'owned', epoch: 1, tookOver: false }
        }
        continue
      }
      // Queued meanwhile by another process, never claimed: the update above takes it next round.
      if (row.state === null) continue
      if (row.state === 'completed' && this.#retained(row, now)) {
        return { kind: 'completed', result: toStoredResult(row) }
      }
      if (row.state === 'completed' || row.state === 'released') {
        const won = this.#reclaim.run(owner, now + leaseMs, now, key, row.epoch, row.state)
        if (won.changes === 1) return { kind: 'owned', epoch: row.epoch + 1, tookOver: false }
        continue
      }
      assertRunning(fp, row)
      if (row.lease_until >= now) {
        return { kind: 'busy', owner: row.owner, epoch: row.epoch, leaseUntil: row.lease_until }
      }
      const taken = this.#tryTakeOver(key, owner, leaseMs, row, now)
      if (taken) return taken
    }
    throw new Error(`claim of ${fp} lost ${MAX_CAS_ROUNDS} compare-and-set rounds in a row`)
  }

  /** Extends the lease while this epoch still owns the claim. False = lost it (fenced out). */
  renew(fp: string, epoch: number, leaseMs: number): boolean {
    checkMs('leaseMs', leaseMs, 1)
    const until = this.#clock.now() + leaseMs
    return this.#writes.run(() => this.#renew.run(until, fpKey(fp), epoch).changes === 1)
  }

  /** Compare-and-set takeover, only after the lease expired. */
  takeOver(fp: string, owner: string, expectedEpoch: number, leaseMs: number): boolean {
    checkMs('leaseMs', leaseMs, 1)
    const now = this.#clock.now()
    const key = fpKey(fp)
    return this.#writes.run(
      () => this.#takeOver.run(owner, now + leaseMs, now, key, expectedEpoch, now).changes === 1,
    )
  }

  /**
   * Fenced completion. It succeeds even after the lease ran out if nobody took over: the epoch, not
   * the clock, decides who may write. `costMicros` is what this execution cost (null: unknown or
   * unpriced): what a reuse of the result saves.
   */
  complete(
    fp: string,
    epoch: number,
    result: string,
    status: StoredStatus,
    costMicros: number | null = null,
  ): boolean {
    const now = this.#clock.now()
    const key = fpKey(fp)
    const ref = this.#writes.run(() => this.#complete(key, epoch, result, status, costMicros, now))
    if (ref === null) return false
    if (this.#stored.size >= 10_000) this.#stored.clear()
    this.#stored.set(fp, ref)
    this.#doorbell.emit(fp)
    return true
  }

  /** Gives up a running claim (transient failure, shutdown) so another worker may claim it. */
  release(fp: string, epoch: number): boolean {
    const now = this.#clock.now()
    const done = this.#writes.run(() => this.#release.run(now, fpKey(fp), epoch).changes === 1)
    if (done) this.#doorbell.emit(fp)
    return done
  }

  /** Forgets a cached failure so the next claim executes again (its epoch keeps counting up). */
  forgetFailure(fp: string): boolean {
    const done = this.#writes.run(() => this.#forgetFailure.run(fpKey(fp)).changes === 1)
    if (done) this.#doorbell.emit(fp)
    return done
  }

  /**
   * Waits for the claim to complete, be released, or expire (then takes it over by CAS). In this
   * process it is woken by complete()/release(); another process's progress is found by polling.
   * A missing claim counts as released: nothing holds the fingerprint, so the caller should claim.
   * Rejects with the signal's reason when aborted.
   */
  wait(
    fp: string,
    owner: string,
    opts: { timeoutMs: number; leaseMs: number; signal?: AbortSignal },
  ): Promise<WaitOutcome> {
    checkMs('leaseMs', opts.leaseMs, 1)
    return waitForClaim({
      fp,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      clock: this.#clock,
      doorbell: this.#doorbell,
      pollMinMs: this.#pollMinMs,
      pollMaxMs: this.#pollMaxMs,
      step: () => this.#waitStep(fp, owner, opts.leaseMs),
    })
  }

  /** The id of the result a completed claim stored, for the tasks that share it. */
  resultRef(fp: string): number | undefined {
    const ref = this.#stored.get(fp)
    if (ref !== undefined) {
      this.#stored.delete(fp)
      return ref
    }
    return this.#resultRef.get(fpKey(fp))?.result_id ?? undefined
  }

  /** The stored result if completed and not past retention. */
  getResult(fp: string): StoredResult | undefined {
    const row = this.#select.get(fpKey(fp))
    if (row === undefined || row.state !== 'completed') return undefined
    return this.#retained(row, this.#clock.now()) ? toStoredResult(row) : undefined
  }

  /** Whether getResult would hand out a result now, without reading it (a forecast's question). */
  holdsResult(fp: string): boolean {
    const row = this.#holds.get(fpKey(fp))
    return row !== undefined && this.#retained(row, this.#clock.now())
  }

  #waitStep(fp: string, owner: string, leaseMs: number): WaitStep {
    const key = fpKey(fp)
    for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
      const now = this.#clock.now()
      const row = this.#select.get(key)
      // Never claimed (NULL) counts as released too: nothing holds the fingerprint.
      if (row === undefined || row.state === 'released' || row.state === null) {
        return { kind: 'released' }
      }
      if (row.state === 'completed') {
        // An expired result is no longer reusable: the caller must claim (and run) again.
        return this.#retained(row, now)
          ? { kind: 'completed', result: toStoredResult(row) }
          : { kind: 'released' }
      }
      assertRunning(fp, row)
      if (row.lease_until >= now) return { kind: 'pending', leaseUntil: row.lease_until }
      const taken = this.#writes.run(() => {
        const owned = this.#tryTakeOver(key, owner, leaseMs, row, now)
        return owned && this.#fence(fp, key, owned)
      })
      if (taken) return taken
    }
    throw new Error(`wait on ${fp} lost ${MAX_CAS_ROUNDS} compare-and-set rounds in a row`)
  }

  /** The compare-and-set takeover of an expired lease; null when another worker moved first. */
  #tryTakeOver(key: Key, owner: string, leaseMs: number, row: ClaimRow, now: number) {
    if (this.#takeOver.run(owner, now + leaseMs, now, key, row.epoch, now).changes !== 1)
      return null
    return {
      kind: 'owned' as const,
      epoch: row.epoch + 1,
      tookOver: true as const,
      previousOwner: row.owner,
      previousEpoch: row.epoch,
    }
  }

  /** A completed result still handed out: within retention, and not truncated unless accepted. */
  #retained(row: Pick<ClaimRow, 'status' | 'completed_at'>, now: number): boolean {
    if (row.status === 'truncated' && !this.acceptTruncated) return false
    return this.#resultTtlMs === 0 || now < (row.completed_at ?? 0) + this.#resultTtlMs
  }
}

/** Stores the result and points the claim at it if `epoch` still owns it: the result's id, or null. */
type CompleteFn = (
  key: Key,
  epoch: number,
  result: string,
  status: string,
  costMicros: number | null,
  now: number,
) => number | null

function toStoredResult(row: ClaimRow): StoredResult {
  return {
    result: row.result ?? '',
    status: row.status ?? 'succeeded',
    owner: row.owner,
    epoch: row.epoch,
    completedAt: row.completed_at ?? 0,
    costMicros: row.cost_micros,
    ...(row.result_id === null ? {} : { ref: row.result_id }),
  }
}

function assertRunning(fp: string, row: ClaimRow): void {
  if (row.state !== 'running') {
    throw new Error(`claim ${fp} has unknown state ${JSON.stringify(row.state)}`)
  }
}

/** A whole number of ms at least `min`, or a TypeError naming the value. */
export function checkMs(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`${name} must be an integer >= ${min} (ms), got ${String(value)}`)
  }
}
