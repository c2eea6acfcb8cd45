import { EventEmitter } from 'node:events'
import type Database from 'better-sqlite3'
import {
  systemClock,
  type ClaimAttempt,
  type ClaimStore,
  type Clock,
  type StoredResult,
  type WaitOutcome,
} from './types'

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
}

type ClaimState = 'running' | 'completed' | 'released'

interface ClaimRow {
  state: ClaimState
  status: StoredResult['status'] | null
  owner: string
  epoch: number
  lease_until: number
  result: string | null
  completed_at: number | null
}

type WaitStep = WaitOutcome | { kind: 'pending'; leaseUntil: number }

// A lost compare-and-set means another worker moved the row forward; re-reading settles it within
// two or three rounds. The bound only turns a bug into an error instead of a hang.
const MAX_CAS_ROUNDS = 16
// Wake a little after the lease ends so that `lease_until < now` holds at the takeover.
const LEASE_SLACK_MS = 5
// setTimeout turns anything above 2^31-1 ms into 1 ms; a longer wait is "no deadline" anyway.
const MAX_TIMER_MS = 2_147_483_647

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
  #resultTtlMs: number

  readonly #insert: Database.Statement<[string, string, number, number]>
  readonly #select: Database.Statement<[string], ClaimRow>
  readonly #reclaim: Database.Statement<[string, number, number, string, number, ClaimState]>
  readonly #takeOver: Database.Statement<[string, number, number, string, number, number]>
  readonly #renew: Database.Statement<[number, string, number]>
  readonly #complete: Database.Statement<[string, string, number, string, number]>
  readonly #release: Database.Statement<[number, string, number]>
  readonly #forgetFailure: Database.Statement<[string]>

  constructor({
    db,
    clock = systemClock,
    resultTtlMs = 86_400_000,
    pollMinMs = 25,
    pollMaxMs = 1000,
  }: SqliteClaimStoreOptions) {
    checkMs('resultTtlMs', resultTtlMs, 0)
    checkMs('pollMinMs', pollMinMs, 1)
    checkMs('pollMaxMs', pollMaxMs, pollMinMs)
    this.#clock = clock
    this.#resultTtlMs = resultTtlMs
    this.#pollMinMs = pollMinMs
    this.#pollMaxMs = pollMaxMs
    this.#doorbell = doorbellFor(db)

    this.#insert = db.prepare(
      `INSERT INTO claims(fp, state, owner, epoch, lease_until, claimed_at)
       VALUES (?, 'running', ?, 1, ?, ?)
       ON CONFLICT(fp) DO NOTHING`,
    )
    this.#select = db.prepare(
      `SELECT state, status, owner, epoch, lease_until, result, completed_at
       FROM claims WHERE fp = ?`,
    )
    // Re-claiming reuses the row, never deletes it: the epoch keeps growing, so an owner from any
    // earlier round is fenced out for good.
    this.#reclaim = db.prepare(
      `UPDATE claims
       SET state = 'running', status = NULL, owner = ?, epoch = epoch + 1, lease_until = ?,
           result = NULL, claimed_at = ?, completed_at = NULL
       WHERE fp = ? AND epoch = ? AND state = ?`,
    )
    this.#takeOver = db.prepare(
      `UPDATE claims SET owner = ?, epoch = epoch + 1, lease_until = ?, claimed_at = ?
       WHERE fp = ? AND state = 'running' AND epoch = ? AND lease_until < ?`,
    )
    this.#renew = db.prepare(
      `UPDATE claims SET lease_until = ? WHERE fp = ? AND epoch = ? AND state = 'running'`,
    )
    this.#complete = db.prepare(
      `UPDATE claims SET state = 'completed', status = ?, result = ?, completed_at = ?
       WHERE fp = ? AND epoch = ? AND state = 'running'`,
    )
    this.#forgetFailure = db.prepare(
      `UPDATE claims SET state = 'released', result = NULL
       WHERE fp = ? AND state = 'completed' AND status = 'failed'`,
    )
    this.#release = db.prepare(
      `UPDATE claims SET state = 'released', lease_until = ?
       WHERE fp = ? AND epoch = ? AND state = 'running'`,
    )
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
    for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
      const now = this.#clock.now()
      if (this.#insert.run(fp, owner, now + leaseMs, now).changes === 1) {
        return { kind: 'owned', epoch: 1, tookOver: false }
      }
      const row = this.#select.get(fp)
      if (row === undefined) continue
      if (row.state === 'completed' && this.#retained(row, now)) {
        return { kind: 'completed', result: toStoredResult(row) }
      }
      if (row.state === 'completed' || row.state === 'released') {
        const won = this.#reclaim.run(owner, now + leaseMs, now, fp, row.epoch, row.state)
        if (won.changes === 1) return { kind: 'owned', epoch: row.epoch + 1, tookOver: false }
        continue
      }
      assertRunning(fp, row)
      if (row.lease_until >= now) {
        return { kind: 'busy', owner: row.owner, epoch: row.epoch, leaseUntil: row.lease_until }
      }
      const taken = this.#tryTakeOver(fp, owner, leaseMs, row, now)
      if (taken) return taken
    }
    throw new Error(`claim of ${fp} lost ${MAX_CAS_ROUNDS} compare-and-set rounds in a row`)
  }

  /** Extends the lease while this epoch still owns the claim. False = lost it (fenced out). */
  renew(fp: string, epoch: number, leaseMs: number): boolean {
    checkMs('leaseMs', leaseMs, 1)
    return this.#renew.run(this.#clock.now() + leaseMs, fp, epoch).changes === 1
  }

  /** Compare-and-set takeover, only after the lease expired. */
  takeOver(fp: string, owner: string, expectedEpoch: number, leaseMs: number): boolean {
    checkMs('leaseMs', leaseMs, 1)
    const now = this.#clock.now()
    return this.#takeOver.run(owner, now + leaseMs, now, fp, expectedEpoch, now).changes === 1
  }

  /**
   * Fenced completion. It succeeds even after the lease ran out if nobody took over: the epoch, not
   * the clock, decides who may write.
   */
  complete(fp: string, epoch: number, result: string, status: 'succeeded' | 'failed'): boolean {
    const done = this.#complete.run(status, result, this.#clock.now(), fp, epoch).changes === 1
    if (done) this.#doorbell.emit(fp)
    return done
  }

  /** Gives up a running claim (transient failure, shutdown) so another worker may claim it. */
  release(fp: string, epoch: number): boolean {
    const done = this.#release.run(this.#clock.now(), fp, epoch).changes === 1
    if (done) this.#doorbell.emit(fp)
    return done
  }

  /** Forgets a cached failure so the next claim executes again (its epoch keeps counting up). */
  forgetFailure(fp: string): boolean {
    const done = this.#forgetFailure.run(fp).changes === 1
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
    const { timeoutMs, leaseMs, signal } = opts
    checkMs('leaseMs', leaseMs, 1)
    if (!(timeoutMs >= 0)) throw new TypeError(`timeoutMs must be >= 0, got ${String(timeoutMs)}`)

    return new Promise<WaitOutcome>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason)
        return
      }
      const doorbell = this.#doorbell
      let settled = false
      let delay = this.#pollMinMs
      let poll: NodeJS.Timeout | undefined
      let deadline: NodeJS.Timeout | undefined

      const settle = (finish: () => void): void => {
        if (settled) return
        settled = true
        clearTimeout(poll)
        clearTimeout(deadline)
        doorbell.off(fp, ring)
        signal?.removeEventListener('abort', onAbort)
        finish()
      }
      const check = (): void => {
        if (settled) return
        clearTimeout(poll)
        let step: WaitStep
        try {
          step = this.#waitStep(fp, owner, leaseMs)
        } catch (err) {
          settle(() => reject(err))
          return
        }
        if (step.kind !== 'pending') {
          settle(() => resolve(step))
          return
        }
        const untilExpiry = Math.max(0, step.leaseUntil - this.#clock.now()) + LEASE_SLACK_MS
        poll = setTimeout(check, Math.min(delay, untilExpiry))
        delay = Math.min(delay * 2, this.#pollMaxMs)
      }
      // Deferred so that the completer's complete() returns before any waiter touches the DB.
      const ring = (): void => queueMicrotask(check)
      const onAbort = (): void => settle(() => reject(signal?.reason))

      // Subscribe before the first read, or a completion in between would go unheard.
      doorbell.on(fp, ring)
      signal?.addEventListener('abort', onAbort, { once: true })
      if (timeoutMs !== Infinity) {
        deadline = setTimeout(
          () => settle(() => resolve({ kind: 'wait_timeout' })),
          Math.min(timeoutMs, MAX_TIMER_MS),
        )
      }
      check()
    })
  }

  /** The stored result if completed and not past retention. */
  getResult(fp: string): StoredResult | undefined {
    const row = this.#select.get(fp)
    if (row === undefined || row.state !== 'completed') return undefined
    return this.#retained(row, this.#clock.now()) ? toStoredResult(row) : undefined
  }

  #waitStep(fp: string, owner: string, leaseMs: number): WaitStep {
    for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
      const now = this.#clock.now()
      const row = this.#select.get(fp)
      if (row === undefined || row.state === 'released') return { kind: 'released' }
      if (row.state === 'completed') {
        // An expired result is no longer reusable: the caller must claim (and run) again.
        return this.#retained(row, now)
          ? { kind: 'completed', result: toStoredResult(row) }
          : { kind: 'released' }
      }
      assertRunning(fp, row)
      if (row.lease_until >= now) return { kind: 'pending', leaseUntil: row.lease_until }
      const taken = this.#tryTakeOver(fp, owner, leaseMs, row, now)
      if (taken) return taken
    }
    throw new Error(`wait on ${fp} lost ${MAX_CAS_ROUNDS} compare-and-set rounds in a row`)
  }

  /** The compare-and-set takeover of an expired lease; null when another worker moved first. */
  #tryTakeOver(fp: string, owner: string, leaseMs: number, row: ClaimRow, now: number) {
    if (this.#takeOver.run(owner, now + leaseMs, now, fp, row.epoch, now).changes !== 1) return null
    return {
      kind: 'owned' as const,
      epoch: row.epoch + 1,
      tookOver: true as const,
      previousOwner: row.owner,
      previousEpoch: row.epoch,
    }
  }

  #retained(row: ClaimRow, now: number): boolean {
    return this.#resultTtlMs === 0 || now < (row.completed_at ?? 0) + this.#resultTtlMs
  }
}

function toStoredResult(row: ClaimRow): StoredResult {
  return {
    result: row.result ?? '',
    status: row.status ?? 'succeeded',
    owner: row.owner,
    epoch: row.epoch,
    completedAt: row.completed_at ?? 0,
  }
}

function assertRunning(fp: string, row: ClaimRow): void {
  if (row.state !== 'running') {
    throw new Error(`claim ${fp} has unknown state ${JSON.stringify(row.state)}`)
  }
}

function checkMs(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`${name} must be an integer >= ${min} (ms), got ${String(value)}`)
  }
}
