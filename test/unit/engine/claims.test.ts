import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SqliteClaimStore, type SqliteClaimStoreOptions } from '../../../src/main/engine/claims'
import { openDatabase } from '../../../src/main/engine/db'
import { fingerprint } from '../../../src/main/engine/fingerprint'
import { systemClock } from '../../../src/main/engine/types'
import { FakeClock } from '../../helpers/clock'

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

describe('claim', () => {
  it('the first claim owns the fingerprint at epoch 1', () => {
    const s = store()
    expect(s.claim(FP, 'A', LEASE)).toEqual({ kind: 'owned', epoch: 1, tookOver: false })
    expect(row()).toMatchObject({
      state: 'running',
      owner: 'A',
      epoch: 1,
      lease_until: clock.t + LEASE,
    })
  })

  it('a second claim while the lease runs is busy, up to and including lease_until', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    const leaseUntil = clock.t + LEASE
    expect(s.claim(FP, 'B', LEASE)).toEqual({ kind: 'busy', owner: 'A', epoch: 1, leaseUntil })
    clock.advance(LEASE)
    expect(s.claim(FP, 'B', LEASE).kind).toBe('busy')
    clock.advance(1)
    expect(s.claim(FP, 'B', LEASE).kind).toBe('owned')
  })

  it('after completion every claim gets the stored result', () => {
    const s = store()
    const completedAt = clock.t + 5
    s.claim(FP, 'A', LEASE)
    clock.advance(5)
    expect(s.complete(FP, 1, '{"text":"hi"}', 'succeeded', 1_234)).toBe(true)
    const expected = {
      kind: 'completed',
      result: {
        result: '{"text":"hi"}',
        status: 'succeeded',
        owner: 'A',
        epoch: 1,
        completedAt,
        // What the execution cost, for the reuse's "saved", and where its result is stored.
        costMicros: 1_234,
        ref: expect.any(Number) as number,
      },
    }
    expect(s.claim(FP, 'B', LEASE)).toEqual(expected)
    expect(s.claim(FP, 'A', LEASE)).toEqual(expected)
    expect(s.getResult(FP)).toEqual(expected.result)
  })

  it('caches deterministic failures as results too', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    s.complete(FP, 1, '{"error":"400 bad request"}', 'failed')
    expect(s.claim(FP, 'B', LEASE)).toMatchObject({
      kind: 'completed',
      result: { status: 'failed' },
    })
  })

  it('takes over an expired lease by compare-and-set; the stale owner is fenced out', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    clock.advance(LEASE + 1)
    expect(s.claim(FP, 'B', LEASE)).toEqual({
      kind: 'owned',
      epoch: 2,
      tookOver: true,
      previousOwner: 'A',
      previousEpoch: 1,
    })
    expect(s.renew(FP, 1, LEASE)).toBe(false)
    expect(s.complete(FP, 1, '"from A"', 'succeeded')).toBe(false)
    expect(s.release(FP, 1)).toBe(false)
    expect(row()).toMatchObject({ state: 'running', owner: 'B', epoch: 2, result: null })
    expect(s.complete(FP, 2, '"from B"', 'succeeded')).toBe(true)
    expect(s.complete(FP, 1, '"from A"', 'succeeded')).toBe(false)
    expect(s.getResult(FP)).toMatchObject({ result: '"from B"', owner: 'B', epoch: 2 })
  })

  it('completion is fenced by epoch, not by the clock: a late owner nobody replaced may finish', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    clock.advance(LEASE * 3)
    expect(s.renew(FP, 1, LEASE)).toBe(true)
    expect(s.complete(FP, 1, '"late but alone"', 'succeeded')).toBe(true)
  })

  it('completes once: a second completion of the same epoch writes nothing', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    expect(s.complete(FP, 1, '"first"', 'succeeded')).toBe(true)
    expect(s.complete(FP, 1, '"second"', 'failed')).toBe(false)
    expect(s.complete(FP, 7, '"other"', 'succeeded')).toBe(false)
    expect(s.getResult(FP)).toMatchObject({ result: '"first"', status: 'succeeded' })
  })

  it('release lets the next claim own it with a higher epoch', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    expect(s.release(FP, 2)).toBe(false)
    expect(s.release(FP, 1)).toBe(true)
    expect(row()).toMatchObject({ state: 'released', epoch: 1 })
    expect(s.release(FP, 1)).toBe(false)
    expect(s.claim(FP, 'B', LEASE)).toEqual({ kind: 'owned', epoch: 2, tookOver: false })
    expect(s.complete(FP, 1, '"A"', 'succeeded')).toBe(false)
    expect(s.complete(FP, 2, '"B"', 'succeeded')).toBe(true)
    expect(s.release(FP, 2)).toBe(false)
  })

  it('re-claims a result past retention, and only then', () => {
    const s = store({ resultTtlMs: 1000 })
    s.claim(FP, 'A', LEASE)
    s.complete(FP, 1, '"old"', 'succeeded')
    clock.advance(999)
    expect(s.claim(FP, 'B', LEASE).kind).toBe('completed')
    expect(s.getResult(FP)).toBeDefined()
    clock.advance(1)
    expect(s.getResult(FP)).toBeUndefined()
    expect(s.claim(FP, 'B', LEASE)).toEqual({ kind: 'owned', epoch: 2, tookOver: false })
    expect(row()).toMatchObject({
      state: 'running',
      owner: 'B',
      epoch: 2,
      status: null,
      result: null,
    })
    expect(s.claim(FP, 'C', LEASE).kind).toBe('busy')
  })

  it('keeps results forever with resultTtlMs 0', () => {
    const s = store({ resultTtlMs: 0 })
    s.claim(FP, 'A', LEASE)
    s.complete(FP, 1, '"kept"', 'succeeded')
    clock.advance(10 * 365 * 86_400_000)
    expect(s.claim(FP, 'B', LEASE).kind).toBe('completed')
  })

  it('applies a retention changed at runtime at once', () => {
    const s = store()
    expect(s.resultTtlMs).toBe(86_400_000)
    s.claim(FP, 'A', LEASE)
    s.complete(FP, 1, '"r"', 'succeeded')
    clock.advance(60_000)
    expect(s.claim(FP, 'B', LEASE).kind).toBe('completed')
    s.resultTtlMs = 900_000 / 20 // 45 s, shorter than the minute that passed
    expect(s.claim(FP, 'B', LEASE).kind).toBe('owned')
    expect(() => (s.resultTtlMs = -1)).toThrow(/resultTtlMs must be an integer >= 0 \(ms\), got -1/)
  })

  it('never moves an epoch back and keeps one row per fingerprint', () => {
    const s = store({ resultTtlMs: 100 })
    const epochs: number[] = []
    const own = (owner: string) => {
      const a = s.claim(FP, owner, LEASE)
      if (a.kind !== 'owned') throw new Error(`expected owned, got ${a.kind}`)
      epochs.push(a.epoch)
      return a.epoch
    }
    s.release(FP, own('A'))
    own('B')
    clock.advance(LEASE + 1)
    s.complete(FP, own('C'), '"c"', 'succeeded')
    clock.advance(100)
    own('D')
    expect(epochs).toEqual([1, 2, 3, 4])
    expect(db.prepare('SELECT COUNT(*) AS n FROM claims').get()).toEqual({ n: 1 })
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
})

describe('renew and takeOver', () => {
  it('renew extends the lease of the owning epoch', () => {
    const s = store()
    const t0 = clock.t
    s.claim(FP, 'A', 1000)
    clock.advance(900)
    expect(s.renew(FP, 1, 1000)).toBe(true)
    clock.advance(900)
    expect(s.claim(FP, 'B', 1000)).toEqual({
      kind: 'busy',
      owner: 'A',
      epoch: 1,
      leaseUntil: t0 + 1900,
    })
    expect(s.renew(FP, 2, 1000)).toBe(false)
  })

  it('takeOver succeeds only after expiry and only for the expected epoch', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    expect(s.takeOver(FP, 'B', 1, LEASE)).toBe(false)
    clock.advance(LEASE + 1)
    expect(s.takeOver(FP, 'B', 2, LEASE)).toBe(false)
    expect(s.takeOver(FP, 'B', 1, LEASE)).toBe(true)
    expect(s.takeOver(FP, 'C', 1, LEASE)).toBe(false)
    expect(s.claim(FP, 'C', LEASE)).toMatchObject({ kind: 'busy', owner: 'B', epoch: 2 })
  })

  it('takeOver never touches a completed or released claim', () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    s.complete(FP, 1, '"done"', 'succeeded')
    clock.advance(LEASE + 1)
    expect(s.takeOver(FP, 'B', 1, LEASE)).toBe(false)
    const other = fingerprint('other', {})
    s.claim(other, 'A', LEASE)
    s.release(other, 1)
    clock.advance(LEASE + 1)
    expect(s.takeOver(other, 'B', 1, LEASE)).toBe(false)
  })
})

describe('wait', () => {
  it('an in-process waiter is woken by complete(), not by polling', async () => {
    const s = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
    s.claim(FP, 'A', LEASE)
    const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
    setImmediate(() => s.complete(FP, 1, '"shared"', 'succeeded'))
    // With a 60 s poll and a 5 s timeout, only the event can produce 'completed'.
    expect(await waiting).toMatchObject({
      kind: 'completed',
      result: { result: '"shared"', owner: 'A' },
    })
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

  it('is woken by release() and reports it', async () => {
    const s = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
    s.claim(FP, 'A', LEASE)
    const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
    setImmediate(() => s.release(FP, 1))
    expect(await waiting).toEqual({ kind: 'released' })
  })

  it('answers at once for a completed, released, expired or missing claim', async () => {
    const s = store({ resultTtlMs: 1000, pollMinMs: 60_000, pollMaxMs: 60_000 })
    const opts = { timeoutMs: 5_000, leaseMs: LEASE }
    s.claim(FP, 'A', LEASE)
    s.complete(FP, 1, '"r"', 'succeeded')
    expect(await s.wait(FP, 'B', opts)).toMatchObject({ kind: 'completed' })
    clock.advance(1000)
    expect(await s.wait(FP, 'B', opts)).toEqual({ kind: 'released' })

    const other = fingerprint('other', {})
    s.claim(other, 'A', LEASE)
    s.release(other, 1)
    expect(await s.wait(other, 'B', opts)).toEqual({ kind: 'released' })
    expect(await s.wait(fingerprint('never', {}), 'B', opts)).toEqual({ kind: 'released' })
  })

  it('takes over by compare-and-set when the lease has already expired', async () => {
    const s = store()
    s.claim(FP, 'A', LEASE)
    clock.advance(LEASE + 1)
    expect(await s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })).toEqual({
      kind: 'owned',
      epoch: 2,
      tookOver: true,
      previousOwner: 'A',
      previousEpoch: 1,
    })
    expect(s.complete(FP, 1, '"A"', 'succeeded')).toBe(false)
  })

  it('notices a lease expiring while it waits (fake clock moved on)', async () => {
    const s = store({ pollMinMs: 2, pollMaxMs: 10 })
    s.claim(FP, 'A', LEASE)
    const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
    setImmediate(() => clock.advance(LEASE + 1))
    expect(await waiting).toMatchObject({ kind: 'owned', epoch: 2, previousOwner: 'A' })
  })

  it('never sleeps past the lease expiry, however long the poll interval', async () => {
    const s = new SqliteClaimStore({ db, clock: systemClock, pollMinMs: 60_000, pollMaxMs: 60_000 })
    s.claim(FP, 'A', 50)
    expect(await s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })).toMatchObject({
      kind: 'owned',
      tookOver: true,
    })
  })

  it('polls for progress made through another connection (another process)', async () => {
    const otherDb = openDatabase(file)
    extraDbs.push(otherDb)
    const elsewhere = new SqliteClaimStore({ db: otherDb, clock })
    const here = store({ pollMinMs: 2, pollMaxMs: 10 })
    elsewhere.claim(FP, 'A', LEASE)
    const waiting = here.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE })
    setTimeout(() => elsewhere.complete(FP, 1, '"from afar"', 'succeeded'), 20)
    expect(await waiting).toMatchObject({ kind: 'completed', result: { result: '"from afar"' } })
  })

  it('returns wait_timeout while the owner still holds the lease', async () => {
    const s = store({ pollMinMs: 5, pollMaxMs: 10 })
    s.claim(FP, 'A', LEASE)
    expect(await s.wait(FP, 'B', { timeoutMs: 40, leaseMs: LEASE })).toEqual({
      kind: 'wait_timeout',
    })
    expect(row()).toMatchObject({ owner: 'A', epoch: 1, state: 'running' })
  })

  it('rejects with the abort reason when aborted, before or during the wait', async () => {
    const s = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
    s.claim(FP, 'A', LEASE)
    const before = new AbortController()
    before.abort(new Error('shutting down'))
    await expect(
      s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE, signal: before.signal }),
    ).rejects.toThrow('shutting down')
    const during = new AbortController()
    const waiting = s.wait(FP, 'B', { timeoutMs: 5_000, leaseMs: LEASE, signal: during.signal })
    setImmediate(() => during.abort())
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('leaves no timers behind, whatever ends the wait', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const s = store({ pollMinMs: 60_000, pollMaxMs: 60_000 })
    s.claim(FP, 'A', LEASE)
    const baseline = timers()
    const opts = { timeoutMs: 60_000, leaseMs: LEASE }

    const aborted = new AbortController()
    const p1 = s.wait(FP, 'B', { ...opts, signal: aborted.signal })
    expect(timers()).toBeGreaterThan(baseline)
    aborted.abort()
    await expect(p1).rejects.toThrow()
    expect(timers()).toBe(baseline)

    await s.wait(FP, 'B', { ...opts, timeoutMs: 1 })
    expect(timers()).toBe(baseline)

    const p3 = s.wait(FP, 'B', opts)
    s.complete(FP, 1, '"x"', 'succeeded')
    await p3
    expect(timers()).toBe(baseline)
  })

  it('validates its numbers', () => {
    const s = store()
    expect(() => s.wait(FP, 'B', { timeoutMs: Number.NaN, leaseMs: LEASE })).toThrow(/timeoutMs/)
    expect(() => s.wait(FP, 'B', { timeoutMs: 1, leaseMs: 0 })).toThrow(/leaseMs .* got 0/)
  })
})

describe('options', () => {
  it('rejects bad numbers, naming the value', () => {
    expect(() => store({ pollMinMs: 0 })).toThrow(/pollMinMs must be an integer >= 1 \(ms\), got 0/)
    expect(() => store({ pollMinMs: 50, pollMaxMs: 10 })).toThrow(/pollMaxMs .* >= 50 .* got 10/)
    expect(() => store({ resultTtlMs: 1.5 })).toThrow(/got 1.5/)
    expect(() => store().claim(FP, 'A', -5)).toThrow(/leaseMs .* got -5/)
  })
})
