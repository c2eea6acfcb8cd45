import type Database from 'better-sqlite3'
import { LostWrites, type WriteHealth } from './write-failures'

/**
 * Where the engine's hot writes go. `run` executes a write; `durable` resolves once everything
 * written so far is committed (wait for it before anything leaves the process); `commit` commits
 * now. A plain store (tests, tools) writes each statement on its own (`directWrites`); the engine
 * groups them (`StepWrites`).
 */
export interface WriteScope {
  run<T>(write: () => T): T
  /** `signal`: a stop ends the wait for the database to take writes (rejects with its reason). */
  durable(since?: number, signal?: AbortSignal): Promise<void>
  /** The number of the open transaction (or the last one): what durable(since) checks against. */
  readonly generation?: number
  /** Resolves once everything written so far is committed; rejects if it was lost (rolled back). */
  committed?(): Promise<void>
  commit(): void
  /** Whether the database takes writes (the engine's scope has one; plain writes do not). */
  readonly health?: WriteHealth
  /** Whether transaction number `generation` was lost to a rollback (the last 1024 are known). */
  lost?(generation: number): boolean
  /** Hears of writes lost to a rollback (what was learnt from them must be forgotten). */
  onRollback?(listener: () => void): void
  /** Runs `hook` inside every transaction of the scope, just before it commits. */
  beforeCommit?(hook: () => void): void
  /** Whether the open transaction is the scope's own (its beforeCommit hooks will run in it). */
  owns?(): boolean
}

/** Each write is its own autocommit statement (or the caller's transaction). */
export const directWrites: WriteScope = {
  run: (write) => write(),
  durable: () => Promise.resolve(),
  commit: () => {},
}

export interface StepWritesOptions {
  /** How long to wait for another connection's write lock. @default 5000 */
  busyTimeoutMs?: number
  /** Hears of a transaction whose commit failed: its writes are lost, as in a crash. */
  onError: (err: Error) => void
  /** Told of every failed write and every commit: stops admissions while the disk is full. */
  health?: WriteHealth
}

// Every open scope of this process, so that opening one on another connection first commits the
// others: they all run on this thread, and waiting on a lock this thread holds would only time out.
const open = new Set<StepWrites>()
// Taken before any test can fake the timers: a commit must never wait on a fake clock.
const setImmediateReal = setImmediate

/** Runs `fn` when this turn of the event loop ends (the real setImmediate, never a fake one). */
export function endOfTurn(fn: () => void): void {
  setImmediateReal(fn)
}

/**
 * Commits every scope of this process that is open: before a write on a connection that does not
 * go through its scope (a command's plain statements), or it would wait on this thread's own lock.
 */
export function commitOpenScopes(): void {
  for (const scope of open) scope.commit()
}

// The scope of each connection: a reader of `PRAGMA data_version` (the spend caps as last seen,
// a pacing block's check) asks it several times a call, and inside the scope's open transaction
// the value read when it began is still the answer: the scope holds the write lock (BEGIN
// IMMEDIATE), so no other connection can commit until it does.
const scopes = new WeakMap<Database.Database, StepWrites>()

/**
 * `PRAGMA data_version` of `db` as of its scope's open transaction (what a fresh read would
 * return); undefined when no scope's transaction is open on it: read it then.
 */
export function scopedDataVersion(db: Database.Database): number | undefined {
  return scopes.get(db)?.openVersion()
}

/** After another connection committed, write per step for this long before grouping again. */
const SHARE_MS = 2000

/**
 * Group commit for the runner's writes, without weakening what a crash leaves behind.
 *
 * Alone on the file, every write of one turn of the event loop (the answers that landed, their
 * ledger rows, completions, the next picks and claims) goes in one transaction, committed when the
 * turn ends. Nothing leaves the process on the strength of an uncommitted write: the runner
 * `await durable()` before every provider call, so a claim is on disk before its request is sent.
 * A crash loses at most the turn under way, which is the state a crash just before that turn leaves:
 * every task done, resumable or visibly failed.
 *
 * When another connection has committed since our last commit (a console, another `pacer run`),
 * the scope shares the lock: one transaction per task step (the writes of one callback and the
 * promise continuations it set off), so the lock is free between steps as it was between
 * statements. Waiting for the lock polls every ~0.1 ms instead of SQLite's backoff (up to 100 ms),
 * so a writer gets in between another process's turns.
 *
 * A commit costs ~10 µs per page written; a task step dirties ~10 pages, a turn of a hundred
 * steps not many more: grouped, a task's share of the commit drops from ~120 µs to a few.
 */
export class StepWrites implements WriteScope {
  readonly #db: Database.Database
  readonly #onError: (err: Error) => void
  readonly #busyTimeoutMs: number
  readonly #dataVersion: Database.Statement
  readonly #rollbackListeners: (() => void)[] = []
  readonly #beforeCommit: (() => void)[] = []
  readonly health: WriteHealth | undefined
  #open = false
  #scheduled = false
  #waiters: { resolve: () => void; reject: (err: Error) => void }[] = []
  #version: unknown = null
  #sharingUntil = 0
  #generation = 0
  /** The last transaction lost to a rollback or a failed commit. */
  #lastLost = -1
  /** The numbers of the last transactions lost, oldest first. */
  readonly #lostOnes = new Set<number>()

  constructor(db: Database.Database, opts: StepWritesOptions) {
    this.#db = db
    this.#onError = opts.onError
    this.#busyTimeoutMs = opts.busyTimeoutMs ?? 5000
    this.health = opts.health
    this.#dataVersion = db.prepare('PRAGMA data_version').pluck()
    scopes.set(db, this)
  }

  /** `PRAGMA data_version` as read when the open transaction began; undefined: none open. */
  openVersion(): number | undefined {
    return this.owns() ? (this.#version as number) : undefined
  }

  /** True while writes are grouped per turn (no other writer seen lately). */
  get grouping(): boolean {
    return performance.now() >= this.#sharingUntil
  }

  run<T>(write: () => T): T {
    if (!this.#db.inTransaction) {
      if (this.#open) this.#lost()
      this.#begin()
    }
    try {
      return write()
    } catch (err) {
      this.health?.fail(err)
      // SQLite may roll the whole transaction back on a failed statement (SQLITE_FULL, IOERR):
      // what was learnt from its writes is forgotten now, not at the next write.
      if (this.#open && !this.#db.inTransaction) this.#lost()
      throw err
    }
  }

  get generation(): number {
    return this.#generation
  }

  /**
   * Resolves once everything written so far is committed and the database takes writes (the
   * gate before anything leaves the process); rejects if those writes were lost, or if any
   * transaction from number `since` on was (a claim made then may be gone). `signal` ends the
   * wait for room: a stopped task must not wait for a disk that may never free.
   */
  async durable(since?: number, signal?: AbortSignal): Promise<void> {
    await this.committed()
    await this.health?.admitted(signal)
    if (since !== undefined && this.#lastLost >= since) throw new LostWrites()
  }

  committed(): Promise<void> {
    if (!this.#open) return Promise.resolve()
    if (!this.grouping) {
      try {
        this.commit()
        return Promise.resolve()
      } catch (err) {
        return Promise.reject(err as Error)
      }
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }))
  }

  commit(): void {
    if (!this.#open) return
    // A failed statement may have rolled the transaction back already (SQLITE_FULL, IOERR).
    if (!this.#db.inTransaction) {
      this.#lost()
      return
    }
    const waiters = this.#waiters.splice(0)
    try {
      for (const hook of this.#beforeCommit) hook()
      this.#open = false
      open.delete(this)
      this.#db.exec('COMMIT')
    } catch (err) {
      this.#open = false
      open.delete(this)
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK')
      const lost = new LostWrites(err as Error)
      this.#rolledBack(lost, waiters)
      throw lost
    }
    this.#version = this.#dataVersion.get()
    this.health?.committed()
    for (const w of waiters) w.resolve()
  }

  lost(generation: number): boolean {
    return this.#lostOnes.has(generation)
  }

  onRollback(listener: () => void): void {
    this.#rollbackListeners.push(listener)
  }

  beforeCommit(hook: () => void): void {
    this.#beforeCommit.push(hook)
  }

  owns(): boolean {
    return this.#open && this.#db.inTransaction
  }

  #begin(): void {
    for (const other of open) other.#commitQuietly()
    this.#acquire()
    this.#generation++
    this.#open = true
    open.add(this)
    // data_version changes only when another connection commits: someone else writes here too.
    const version = this.#dataVersion.get()
    if (this.#version !== null && version !== this.#version) {
      this.#sharingUntil = performance.now() + SHARE_MS
    }
    this.#version = version
    if (this.#scheduled) return
    this.#scheduled = true
    const commit = () => {
      this.#scheduled = false
      this.#commitQuietly()
    }
    if (this.grouping) setImmediateReal(commit)
    // A microtask that schedules a tick: Node runs the tick once the whole microtask queue has
    // drained, i.e. after every continuation this step set off (a tick scheduled directly from a
    // callback would run before them).
    else queueMicrotask(() => process.nextTick(commit))
  }

  /** BEGIN IMMEDIATE, polling the lock finely: a busy writer frees it only between its turns. */
  #acquire(): void {
    const deadline = performance.now() + this.#busyTimeoutMs
    const pause = new Int32Array(new SharedArrayBuffer(4))
    // Set afresh each time: SQLite applies this pragma when the statement is compiled, so a
    // prepared one would not set it again when run.
    this.#db.pragma('busy_timeout = 0')
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          this.#db.exec('BEGIN IMMEDIATE')
          if (attempt > 0) this.#sharingUntil = performance.now() + SHARE_MS
          return
        } catch (err) {
          const code = (err as { code?: unknown }).code
          const busy = typeof code === 'string' && code.startsWith('SQLITE_BUSY')
          if (!busy || performance.now() > deadline) throw err
          Atomics.wait(pause, 0, 0, attempt < 100 ? 0.1 : 1)
        }
      }
    } finally {
      this.#db.pragma(`busy_timeout = ${this.#busyTimeoutMs}`)
    }
  }

  #lost(): void {
    this.#open = false
    open.delete(this)
    this.#rolledBack(new LostWrites(), this.#waiters.splice(0))
  }

  #rolledBack(err: LostWrites, waiters: { reject: (err: Error) => void }[]): void {
    this.#lastLost = this.#generation
    this.#lostOnes.add(this.#generation)
    // Asked about the transaction of a writer's previous try, one look at the disk before (5 s at
    // most): far fewer are lost in between.
    if (this.#lostOnes.size > 1024) this.#lostOnes.delete(this.#lostOnes.values().next().value!)
    this.health?.fail(err)
    for (const listener of this.#rollbackListeners) listener()
    for (const w of waiters) w.reject(err)
    this.#onError(err)
  }

  #commitQuietly(): void {
    try {
      this.commit()
    } catch {
      // #rolledBack told onError and the waiters already.
    }
  }
}
