import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  SqliteClaimStore,
  type SqliteClaimStoreOptions,
} from '../../../../src/main/engine/claims/claims'
import { openDatabase } from '../../../../src/main/engine/db'
import { fingerprint } from '../../../../src/main/engine/core/fingerprint'
import { FakeClock } from '../../../helpers/clock'
import { claimStoreSuite } from './claims-suite'

const LEASE = 10_000
const FP = fingerprint('summarize', { text: 'hello' })

let dir: string
let file: string
let db: Database.Database
let clock: FakeClock
const extraDbs: Database.Database[] = []

function store(opts: Partial<SqliteClaimStoreOptions> = {}): SqliteClaimStore {
  return new SqliteClaimStore({ db, clock, ...opts })
}

function row(fp = FP) {
  return db
    .prepare('SELECT state, status, owner, epoch, lease_until, result FROM claims WHERE fp = ?')
    .get(fp) as
    | {
        state: string
        status: string | null
        owner: string
        epoch: number
        lease_until: number
        result: string | null
      }
    | undefined
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pacer-claims-'))
  file = path.join(dir, 'pacer.db')
  db = openDatabase(file)
  clock = new FakeClock()
})
afterEach(() => {
  for (const other of extraDbs.splice(0)) other.close()
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

claimStoreSuite('SQLite', async () => {
  const other = openDatabase(file)
  extraDbs.push(other)
  return {
    store: (opts) => store(opts),
    elsewhere: (opts) => new SqliteClaimStore({ db: other, ...opts }),
    row: async (fp) => row(fp),
    count: async () => (db.prepare('SELECT COUNT(*) AS n FROM claims').get() as { n: number }).n,
    close: () => {},
  }
})

// What only the SQLite store does: results shared with the queue's tasks, one row per
// fingerprint, the compare-and-set rounds of its statements, one doorbell per connection.
describe('SQLite claims', () => {
  it('a completed claim points at its stored result: the tasks that share it point there too', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    s.complete(FP, 1, '{"text":"hi"}', 'succeeded', 1_234)
    const ref = s.resultRef(FP)
    expect(ref).toEqual(expect.any(Number))
    expect(s.claim(FP, 'B', LEASE)).toMatchObject({ kind: 'completed', result: { ref } })
    expect(s.getResult(FP)?.ref).toBe(ref)
  })

  // Inside the runner's open transaction a completion takes no savepoint: a fenced-out one must
  // delete the result row it wrote, or it would be committed with the turn, pointed at by nothing.
  it('a fenced-out completion inside an open transaction leaves no result row behind', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    const results = () => (db.prepare('SELECT COUNT(*) AS n FROM results').get() as { n: number }).n
    db.exec('BEGIN IMMEDIATE')
    expect(s.complete(FP, 2, '{"text":"stale"}', 'succeeded')).toBe(false)
    expect(results()).toBe(0)
    expect(s.complete(FP, 1, '{"text":"hi"}', 'succeeded')).toBe(true)
    db.exec('COMMIT')
    expect(results()).toBe(1)
    expect(row()).toMatchObject({ state: 'completed', result: '{"text":"hi"}' })
    // Outside a transaction, the same, through a transaction of its own.
    s.claim(fingerprint('t', { n: 2 }), 'A', LEASE)
    expect(s.complete(fingerprint('t', { n: 2 }), 7, '{"text":"x"}', 'succeeded')).toBe(false)
    expect(results()).toBe(1)
  })

  // Another worker ("C") writes the row in the instant between B's read and B's compare-and-set:
  // the trigger runs C's update, then drops B's (RAISE(IGNORE) keeps C's change).
  function raceOnce(cUpdate: string): void {
    db.exec(`
      CREATE TEMP TABLE raced (done INTEGER);
      CREATE TEMP TRIGGER race BEFORE UPDATE ON fingerprints
      WHEN NEW.owner = 'B' AND NOT EXISTS (SELECT 1 FROM raced)
      BEGIN
        INSERT INTO raced VALUES (1);
        ${cUpdate};
        SELECT RAISE(IGNORE);
      END;
    `)
  }

  it('re-reads and decides again when a takeover loses a race', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    clock.advance(LEASE + 1)
    raceOnce(
      `UPDATE fingerprints SET owner = 'C', epoch = epoch + 1, lease_until = ${clock.t + LEASE}
       WHERE fp = OLD.fp`,
    )
    expect(s.claim(FP, 'B', LEASE)).toEqual({
      kind: 'busy',
      owner: 'C',
      epoch: 2,
      leaseUntil: clock.t + LEASE,
    })
  })

  it('re-reads and decides again when a re-claim loses a race', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    s.release(FP, 1)
    raceOnce(
      `INSERT INTO results(body) VALUES ('"C"');
       UPDATE fingerprints SET state = 'completed', status = 'succeeded',
         result_id = last_insert_rowid(), completed_at = ${clock.t}, owner = 'C',
         epoch = epoch + 1 WHERE fp = OLD.fp`,
    )
    expect(s.claim(FP, 'B', LEASE)).toMatchObject({
      kind: 'completed',
      result: { result: '"C"', owner: 'C', epoch: 2 },
    })
  })

  it('a waiter that loses the takeover race keeps waiting on the winner', async () => {
    const s = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
    s.claim(FP, 'A', LEASE)
    clock.advance(LEASE + 1)
    raceOnce(
      `UPDATE fingerprints SET owner = 'C', epoch = epoch + 1, lease_until = ${clock.t + LEASE}
       WHERE fp = OLD.fp`,
    )
    const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
    setImmediate(() => s.complete(FP, 2, '"C"', 'succeeded'))
    expect(await waiting).toMatchObject({ kind: 'completed', result: { owner: 'C', epoch: 2 } })
  })

  it('gives up with an error instead of spinning when every compare-and-set loses', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    clock.advance(LEASE + 1)
    db.exec(
      `CREATE TEMP TRIGGER never BEFORE UPDATE ON fingerprints BEGIN SELECT RAISE(IGNORE); END`,
    )
    expect(() => s.claim(FP, 'B', LEASE)).toThrow(/lost 16 compare-and-set rounds/)
  })
  it('wakes every waiter on the fingerprint, across stores sharing the connection', async () => {
    const warnings: Error[] = []
    const onWarning = (w: Error) => warnings.push(w)
    process.on('warning', onWarning)
    try {
      const a = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
      const b = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
      a.claim(FP, 'A', LEASE)
      const waiters = Array.from({ length: 25 }, (_, i) =>
        b.wait(FP, `W${i}`, { timeoutMs: 5_000, leaseMs: LEASE }),
      )
      setImmediate(() => a.complete(FP, 1, '"all"', 'succeeded'))
      const outcomes = await Promise.all(waiters)
      expect(outcomes.every((o) => o.kind === 'completed')).toBe(true)
      expect(warnings).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('leaves no timers behind, whatever ends the wait', async () => {
    // Counted on fake timers: the process-wide list also holds other tests' and vitest's own
    // timers, which can fire mid-test and move any baseline (it did on CI).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const s = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
      s.claim(FP, 'A', LEASE)
      expect(vi.getTimerCount()).toBe(0)
      const opts = { timeoutMs: 60_000, leaseMs: LEASE }

      const aborted = new AbortController()
      const p1 = s.wait(FP, 'B', { ...opts, signal: aborted.signal })
      expect(vi.getTimerCount()).toBeGreaterThan(0)
      aborted.abort()
      await expect(p1).rejects.toThrow()
      expect(vi.getTimerCount()).toBe(0)

      const p2 = s.wait(FP, 'B', { ...opts, timeoutMs: 1 })
      await vi.advanceTimersByTimeAsync(2)
      await p2
      expect(vi.getTimerCount()).toBe(0)

      const p3 = s.wait(FP, 'B', opts)
      expect(vi.getTimerCount()).toBeGreaterThan(0)
      s.complete(FP, 1, '"x"', 'succeeded')
      await p3
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })
})
