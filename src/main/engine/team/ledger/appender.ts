// Appends this database's ledger rows to the team's stream, off the hot path: the runner writes
// its rows to SQLite as always, and this reads them back after a cursor on a connection of its own
// (so it only ever sees committed rows) every `intervalMs`, in batches of `batchRows`, a few
// batches pipelined at once. An outage loses nothing: the rows wait in SQLite, and when Redis
// answers again the appender continues from the cursor Redis holds. A cursor Redis no longer has
// while this process had appended means Redis lost its data (restarted without persistence):
// every row is appended again, from the first.
import type Database from 'better-sqlite3'
import { ENTRY_STRINGS, EntryReader } from './entries'
import type { RedisLedgerStream } from './stream'

/** What an operator sees of the appender: rows waiting for Redis, and when they are all in. */
export interface AppenderStatus {
  up: boolean
  message: string
}

export interface LedgerAppenderOptions {
  /** A connection that sees only committed rows (its own; read only is enough). */
  db: Database.Database
  stream: RedisLedgerStream
  machine: string
  /** machine/database id (source.ts). */
  source: string
  /** @default 250 */
  intervalMs?: number
  /** Rows per XADD batch (one script call). @default 500 */
  batchRows?: number
  /** Batches sent before the first answer is awaited. @default 4 */
  pipeline?: number
  onStatus?: (status: AppenderStatus) => void
  /** Something went wrong that is not an outage (a bad row): said, then tried again. */
  onWarning?: (message: string) => void
}

/** How often a status repeats while rows keep waiting. */
const REPEAT_MS = 10_000

export class LedgerAppender {
  readonly #o: Required<Omit<LedgerAppenderOptions, 'onStatus' | 'onWarning'>> &
    Pick<LedgerAppenderOptions, 'onStatus' | 'onWarning'>
  readonly #reader: EntryReader
  /** The cursor as Redis last said it; undefined: not known (start, or after an error). */
  #remote: number | null | undefined = undefined
  /** The last row id this process saw appended (by itself or another process on the file). */
  #local = 0
  #appended = 0
  #timer: NodeJS.Timeout | null = null
  #running: Promise<void> | null = null
  #behindSince: number | null = null
  #lastSaid = 0

  constructor(options: LedgerAppenderOptions) {
    this.#o = { intervalMs: 250, batchRows: 500, pipeline: 4, ...options }
    this.#reader = new EntryReader(options.db)
  }

  /** Rows this process appended (a re-append after a Redis loss counts again). */
  get appended(): number {
    return this.#appended
  }

  /** Local rows not in the stream yet, as far as this process knows. */
  get waiting(): number {
    return Math.max(0, this.#reader.maxId() - this.#local)
  }

  /**
   * While the team store cannot be reached: the rows waiting and since when (epoch ms). Null when
   * it answers (rows committed in the last quarter-second are on their way, not waiting) or when
   * nothing waits.
   */
  get backlog(): { rows: number; since: number } | null {
    if (this.#behindSince === null) return null
    let rows: number
    try {
      rows = this.waiting
    } catch {
      // Its own connection is closed (shutting down): nothing to say.
      return null
    }
    return rows > 0 ? { rows, since: this.#behindSince } : null
  }

  start(): void {
    if (this.#timer) return
    this.#timer = setInterval(() => void this.flush().catch(() => {}), this.#o.intervalMs)
    this.#timer.unref()
  }

  /**
   * Appends every row committed so far; rejects when Redis cannot take them now (they stay
   * waiting). A flush already running is joined, then run again for what came after.
   */
  async flush(): Promise<void> {
    while (this.#running) await this.#running.catch(() => {})
    const run = this.#drain()
    this.#running = run
    try {
      await run
    } finally {
      if (this.#running === run) this.#running = null
    }
  }

  /** Stops the timer and appends what is left (the last flush, before the connection closes). */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = null
    await this.flush().catch(() => {})
  }

  async #drain(): Promise<void> {
    // Read the cursor again on every flush, even with nothing to send: a Redis that lost its data
    // is noticed by a database that is idle, too.
    this.#remote = undefined
    try {
      while (await this.#round()) {
        // next round
      }
    } catch (err) {
      this.#remote = undefined
      this.#behind(err as Error)
      throw err
    }
    if (this.#behindSince !== null) {
      this.#behindSince = null
      this.#o.onStatus?.({
        up: true,
        message: `ledger: every row is in the team store again (${this.#appended} appended by this process)`,
      })
    }
  }

  /** One round of up to `pipeline` batches; true when there may be more. */
  async #round(): Promise<boolean> {
    const { stream, source, machine, batchRows } = this.#o
    if (this.#remote === undefined) this.#remote = await stream.cursor(source)
    if (this.#remote === null && this.#local > 0) {
      this.#o.onWarning?.(
        `ledger: the team store has lost this database's rows (restarted without persistence?): appending all ${this.#reader.maxId()} again`,
      )
      this.#local = 0
    }
    let from = this.#remote ?? 0
    const sends: Promise<{
      rows: number
      next: number
      reply: Awaited<ReturnType<RedisLedgerStream['append']>>
    }>[] = []
    let expected = this.#remote
    for (let k = 0; k < this.#o.pipeline; k++) {
      const batch = this.#reader.entries(from, batchRows, machine, source)
      if (batch.rows === 0) break
      const { rows, last: next } = batch
      const sent = stream.append(source, expected, next, ENTRY_STRINGS, batch.flat)
      sends.push(sent.then((reply) => ({ rows, next, reply })))
      expected = next
      from = next
      if (rows < batchRows) break
    }
    if (sends.length === 0) {
      this.#local = Math.max(this.#local, this.#remote ?? 0)
      return false
    }
    const replies = await Promise.all(sends)
    for (const { rows, reply } of replies) if (reply.ok) this.#appended += rows
    // Scripts run in the order sent: the last one's answer is the cursor as it stands.
    const last = replies.at(-1)!
    this.#remote = last.reply.ok ? last.next : last.reply.cursor
    if (this.#remote !== null) this.#local = Math.max(this.#local, this.#remote)
    // A refused batch (another process moved the cursor, or Redis lost it) is read again from
    // the cursor Redis holds; a full round means more may be waiting.
    return !last.reply.ok || replies.length === this.#o.pipeline
  }

  #behind(err: Error): void {
    const now = Date.now()
    if (this.#behindSince === null) this.#behindSince = now
    else if (now - this.#lastSaid < REPEAT_MS) return
    this.#lastSaid = now
    let waiting: number
    try {
      waiting = this.waiting
    } catch {
      waiting = NaN
    }
    this.#o.onStatus?.({
      up: false,
      message: `ledger: ${Number.isNaN(waiting) ? 'rows' : `${waiting} row(s)`} waiting for the team store (${err.message.split('\n')[0]})`,
    })
  }
}
