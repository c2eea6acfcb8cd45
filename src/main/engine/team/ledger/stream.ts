// The team ledger in Redis: one stream of entries (entries.ts) from every source, and per source
// the last local row id appended (its cursor). A batch is appended by one Lua script that first
// compares the cursor with the one the appender expects and moves it only then, so two processes
// on one database never append a row twice, and a reply lost with the connection is harmless:
// the next attempt reads the cursor again.
//
// Keys, under the store's prefix P: `P ledger` the stream, `P ledger:cursors` a hash of source →
// last appended row id.
import type { RedisLink } from '../../pacing/store-redis'
import { lua } from '../../redis/lua'
import { runScript } from '../../redis/script-runner'

/** The append (redis/lua/ledger/append.lua), for the client that runs it (team/scripts.ts). */
export const APPEND = lua('ledgerAppend', 'ledger/append')

/** An append's answer: done, or the cursor as Redis holds it (null: none, e.g. Redis lost it). */
export type AppendReply = { ok: true } | { ok: false; cursor: number | null }

/** One stream entry as XRANGE gives it: its id and its field/value strings. */
export type RawEntry = [id: string, fields: string[]]

export class RedisLedgerStream {
  readonly #client: RedisLink
  readonly key: string
  readonly #cursors: string

  constructor(client: RedisLink, prefix = 'pacer:') {
    this.#client = client
    this.key = `${prefix}ledger`
    this.#cursors = `${prefix}ledger:cursors`
  }

  /** The last row id of `source` in the stream; null when Redis has none. */
  async cursor(source: string): Promise<number | null> {
    const v = await this.#client.sendCommand(['HGET', this.#cursors, source])
    return cursorOf(v)
  }

  /**
   * Appends entries (flat field/value strings, `strings` per entry) of `source` and moves its
   * cursor from `expected` to `next`, if Redis still holds `expected`.
   */
  async append(
    source: string,
    expected: number | null,
    next: number,
    strings: number,
    flat: readonly string[],
  ): Promise<AppendReply> {
    const reply = await runScript(
      this.#client,
      APPEND,
      [this.key, this.#cursors],
      [source, expected === null ? '' : String(expected), String(next), String(strings), ...flat],
    )
    const [done, cursor] = reply as [number, string]
    return done === 1 ? { ok: true } : { ok: false, cursor: cursorOf(cursor) }
  }

  /** The id of the stream's last entry now (null: empty): where a reader's snapshot ends. */
  async lastId(): Promise<string | null> {
    const last = (await this.#client.sendCommand([
      'XREVRANGE',
      this.key,
      '+',
      '-',
      'COUNT',
      '1',
    ])) as RawEntry[] | null
    return last?.[0]?.[0] ?? null
  }

  /** Up to `count` entries after `after` (exclusive; '-' from the start) up to `end` (inclusive). */
  async page(after: string, end: string, count: number): Promise<RawEntry[]> {
    const start = after === '-' ? '-' : `(${after}`
    const reply = await this.#client.sendCommand([
      'XRANGE',
      this.key,
      start,
      end,
      'COUNT',
      String(count),
    ])
    return (reply as RawEntry[] | null) ?? []
  }

  /** Entries in the stream (each source's rows, and any appended again after a loss). */
  async length(): Promise<number> {
    return Number(await this.#client.sendCommand(['XLEN', this.key]))
  }

  /** Every source's cursor: what each database has appended. */
  async cursors(): Promise<Map<string, number>> {
    const flat = ((await this.#client.sendCommand(['HGETALL', this.#cursors])) ?? []) as string[]
    const out = new Map<string, number>()
    for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i]!, Number(flat[i + 1]))
    return out
  }
}

function cursorOf(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error(`team ledger cursor is not a row id: ${String(v)}`)
  return n
}
