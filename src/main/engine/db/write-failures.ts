// A database that cannot take writes (a full disk, SQLite's page limit, an I/O error on write):
// what the engine does meanwhile. It stops sending (nothing leaves the process whose answer could
// not be recorded), keeps the answers already paid for in memory, and tries again with backoff.
import { EventEmitter } from 'node:events'
import { statfsSync } from 'node:fs'
import { dirname } from 'node:path'
import type Database from 'better-sqlite3'
import { backoff, type Backoff } from '../core/backoff'

/** SQLITE_FULL, SQLITE_IOERR_* or ENOSPC: the write did not reach the file, and may later. */
export function isWriteFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return err instanceof LostWrites
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'ENOSPC'
}

/** The writes of a transaction that SQLite rolled back (or whose commit failed): none is on disk. */
export class LostWrites extends Error {
  /** The cause's code (SQLITE_FULL, SQLITE_BUSY...), so that callers can tell them apart. */
  readonly code: string | undefined

  constructor(override readonly cause?: Error) {
    super(cause?.message ?? 'a write transaction was rolled back by SQLite: its writes are lost')
    this.code = (cause as { code?: string } | undefined)?.code
  }
}

/** Bytes free to this user on the filesystem holding `file`; null when it cannot be read. */
function freeBytes(file: string): number | null {
  try {
    const s = statfsSync(dirname(file))
    return s.bavail * s.bsize
  } catch {
    return null
  }
}

function formatBytes(n: number | null): string {
  if (n === null) return 'unknown space'
  if (n < 1024 * 1024) return `${Math.floor(n / 1024)} KB`
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`
  return `${(n / 1024 ** 3).toFixed(1)} GB`
}

/** What the engine needs of timers: real ones by default, taken before a test fakes them. */
export interface HealthTimers {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
  now(): number
}

const realSetTimeout = setTimeout
const realClearTimeout = clearTimeout
const realTimers: HealthTimers = {
  setTimeout: (fn, ms) => {
    const t = realSetTimeout(fn, ms)
    // The retry alone must not keep a finished process alive.
    t.unref()
    return t
  },
  clearTimeout: (h) => realClearTimeout(h as NodeJS.Timeout),
  now: () => Date.now(),
}

export interface WriteHealthOptions {
  dbPath: string
  /**
   * Whether the database looks able to take writes again (free space, pages under the limit).
   * Cheap and writes nothing: a real write confirms it.
   */
  probe: () => boolean
  /** @default real timers */
  timers?: HealthTimers
  /** First wait before looking again; doubles up to maxDelayMs. @default 250 */
  minDelayMs?: number
  /** @default 5000 */
  maxDelayMs?: number
}

export interface HealthEvents {
  /** The first failed write of an episode: one line's worth. */
  blocked: [message: string]
  /** A write went through again. */
  resumed: [message: string]
}

/** A paid answer kept in memory until its write goes through. */
export interface Held {
  release(): void
}

type Waiter = { resolve: () => void; reject: (err: unknown) => void; signal?: AbortSignal }

/**
 * Whether the database takes writes. Blocked at the first failed write: admissions wait, writers
 * of paid answers wait for the next look (backoff 250 ms doubling to 5 s, never a busy loop).
 * When the look finds room the writers try (a trial); the first commit that goes through resumes
 * admissions. If nothing is held, finding room is enough.
 */
export class WriteHealth extends EventEmitter<HealthEvents> {
  readonly #o: Required<Omit<WriteHealthOptions, 'timers'>> & { timers: HealthTimers }
  #blocked = false
  #trial = false
  #since = 0
  readonly #looks: Backoff
  #timer: unknown = undefined
  #cause = ''
  readonly #admitters = new Set<Waiter>()
  readonly #writers = new Set<Waiter>()
  readonly #held = new Map<Held, number | null>()

  constructor(options: WriteHealthOptions) {
    super()
    this.#o = {
      minDelayMs: 250,
      maxDelayMs: 5000,
      timers: realTimers,
      ...options,
    }
    this.#looks = backoff({ initialMs: this.#o.minDelayMs, maxMs: this.#o.maxDelayMs })
  }

  get blocked(): boolean {
    return this.#blocked
  }

  /**
   * Notes a failed write. True when it is a write failure (the caller should hold what it was
   * writing and wait); the first one of an episode announces it.
   */
  fail(err: unknown): boolean {
    if (!isWriteFailure(err)) return false
    this.#trial = false
    if (this.#blocked) return true
    this.#blocked = true
    this.#since = this.#o.timers.now()
    this.#looks.reset()
    const cause = err instanceof LostWrites ? err.cause : (err as Error)
    this.#cause = cause?.message ?? 'write failed'
    this.emit(
      'blocked',
      `the database ${this.#o.dbPath} cannot take writes (${this.#cause}; ` +
        `${formatBytes(freeBytes(this.#o.dbPath))} free on its filesystem): no new calls until it ` +
        'can; answers already paid for are kept in memory and written when it can',
    )
    this.#schedule()
    return true
  }

  /** A commit went through: the database takes writes again (if it did not, nothing changes). */
  committed(): void {
    if (!this.#blocked) return
    if (!this.#trial && !this.#o.probe()) return
    this.#resume()
  }

  /** Resolves once calls may be sent (not blocked); rejects with the signal's reason. */
  admitted(signal?: AbortSignal): Promise<void> {
    return this.#blocked ? this.#wait(this.#admitters, signal) : Promise.resolve()
  }

  /** Resolves when a writer should try again: the next look that finds room, or a resume. */
  retryWhenRoom(signal?: AbortSignal): Promise<void> {
    return this.#blocked ? this.#wait(this.#writers, signal) : Promise.resolve()
  }

  /** Rejects every admission waiting (the runner stops: what was not sent will not be). */
  cancelAdmissions(reason: unknown): void {
    for (const w of this.#admitters) w.reject(reason)
    this.#admitters.clear()
  }

  /** Keeps count of a paid answer not on disk yet, with its cost (null: unknown). */
  hold(costMicros: number | null): Held {
    const held: Held = { release: () => this.#held.delete(held) }
    this.#held.set(held, costMicros)
    return held
  }

  /** The paid answers not written (yet): after a stop with the disk still full, they are lost. */
  held(): { count: number; costMicros: number; unpriced: number } {
    let costMicros = 0
    let unpriced = 0
    for (const c of this.#held.values()) {
      if (c === null) unpriced++
      else costMicros += c
    }
    return { count: this.#held.size, costMicros, unpriced }
  }

  close(): void {
    if (this.#timer !== undefined) this.#o.timers.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #wait(set: Set<Waiter>, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal }
      const onAbort = () => {
        set.delete(w)
        reject(signal?.reason)
      }
      w.resolve = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      set.add(w)
    })
  }

  #schedule(): void {
    if (this.#timer !== undefined) return
    this.#timer = this.#o.timers.setTimeout(() => {
      this.#timer = undefined
      this.#look()
    }, this.#looks.next())
  }

  #look(): void {
    if (!this.#blocked) return
    if (!this.#o.probe()) {
      this.#schedule()
      return
    }
    if (this.#writers.size === 0) {
      // Nothing held waits to prove it: room on the disk is enough to send again.
      this.#resume()
      return
    }
    // The writers try; the first commit that goes through resumes the rest.
    this.#trial = true
    const writers = [...this.#writers]
    this.#writers.clear()
    for (const w of writers) w.resolve()
    this.#schedule()
  }

  #resume(): void {
    this.#blocked = false
    this.#trial = false
    this.close()
    const seconds = ((this.#o.timers.now() - this.#since) / 1000).toFixed(1)
    this.emit(
      'resumed',
      `the database ${this.#o.dbPath} takes writes again after ${seconds} s: sending resumes`,
    )
    for (const set of [this.#writers, this.#admitters]) {
      const waiters = [...set]
      set.clear()
      for (const w of waiters) w.resolve()
    }
  }
}

/** Free space and page room enough for a task's writes (a few pages), as the probe asks. */
export function roomToWrite(db: Database.Database, dbPath: string): boolean {
  const free = freeBytes(dbPath)
  if (free !== null && free < 1024 * 1024) return false
  const max = db.pragma('max_page_count', { simple: true }) as number
  const count = db.pragma('page_count', { simple: true }) as number
  return max - count >= 64
}

/** The engine's WriteHealth for its database file: the probe and the two lines. */
export function wireWriteHealth(
  db: Database.Database,
  dbPath: string,
  say: (message: string) => void,
): WriteHealth {
  const health = new WriteHealth({
    dbPath,
    probe: () => db.open && (db.memory || roomToWrite(db, dbPath)),
  })
  health.on('blocked', say)
  health.on('resumed', say)
  return health
}
