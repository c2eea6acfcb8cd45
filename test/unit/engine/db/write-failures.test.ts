// A database that cannot take writes: WriteHealth's backoff on a fake clock, and StepWrites on a
// real file whose connection SQLite's page limit fills (PRAGMA max_page_count).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { StepWrites } from '../../../../src/main/engine/db/step-writes'
import {
  isWriteFailure,
  LostWrites,
  roomToWrite,
  WriteHealth,
  type HealthTimers,
} from '../../../../src/main/engine/db/write-failures'
import { FakeClock } from '../../../helpers/clock'

/** Timers on the fake clock: `advance` runs what falls due, in order. */
class FakeTimers implements HealthTimers {
  readonly clock = new FakeClock()
  readonly due: { at: number; fn: () => void }[] = []
  /** Every delay asked for, in order: the backoff. */
  readonly delays: number[] = []
  setTimeout(fn: () => void, ms: number): unknown {
    this.delays.push(ms)
    const timer = { at: this.clock.now() + ms, fn }
    this.due.push(timer)
    return timer
  }
  clearTimeout(handle: unknown): void {
    const i = this.due.indexOf(handle as (typeof this.due)[number])
    if (i >= 0) this.due.splice(i, 1)
  }
  now(): number {
    return this.clock.now()
  }
  advance(ms: number): void {
    const end = this.clock.now() + ms
    for (;;) {
      this.due.sort((a, b) => a.at - b.at)
      const next = this.due[0]
      if (!next || next.at > end) break
      this.due.shift()
      this.clock.t = next.at
      next.fn()
    }
    this.clock.t = end
  }
}

const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
const settled = async (p: Promise<unknown>) => {
  let state = 'pending'
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  )
  for (let i = 0; i < 5; i++) await Promise.resolve()
  return state
}

describe('WriteHealth', () => {
  let timers: FakeTimers
  let room: boolean
  let health: WriteHealth
  let said: string[]
  beforeEach(() => {
    timers = new FakeTimers()
    room = false
    said = []
    health = new WriteHealth({ dbPath: '/data/pacer.db', probe: () => room, timers })
    health.on('blocked', (m) => said.push(`blocked: ${m}`))
    health.on('resumed', (m) => said.push(`resumed: ${m}`))
  })

  it('tells a write failure from any other error', () => {
    expect(isWriteFailure(full)).toBe(true)
    expect(isWriteFailure(Object.assign(new Error('x'), { code: 'SQLITE_IOERR_WRITE' }))).toBe(true)
    expect(isWriteFailure(Object.assign(new Error('x'), { code: 'ENOSPC' }))).toBe(true)
    expect(isWriteFailure(new LostWrites())).toBe(true)
    expect(isWriteFailure(new LostWrites(full))).toBe(true)
    const busy = Object.assign(new Error('locked'), { code: 'SQLITE_BUSY' })
    expect(isWriteFailure(busy)).toBe(false)
    expect(isWriteFailure(new LostWrites(busy))).toBe(false)
    expect(isWriteFailure(new Error('SQLITE_CONSTRAINT'))).toBe(false)
    expect(health.fail(busy)).toBe(false)
    expect(health.blocked).toBe(false)
  })

  it('says it once per episode, naming the file and its free space, and looks again with backoff', () => {
    expect(health.fail(full)).toBe(true)
    expect(health.fail(full)).toBe(true)
    expect(health.fail(new LostWrites(full))).toBe(true)
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(
      /^blocked: the database \/data\/pacer\.db cannot take writes \(database or disk is full; (unknown space|[\d.]+ [KMG]B) free on its filesystem\)/,
    )
    // A minute of a full disk: a look every 250 ms doubling to 5 s, not a busy loop.
    timers.advance(60_000)
    expect(timers.delays.slice(0, 6)).toEqual([250, 500, 1000, 2000, 4000, 5000])
    expect(timers.delays.length).toBeLessThan(20)
    expect(health.blocked).toBe(true)
  })

  it('holds admissions until there is room; with nothing held, room is enough to resume', async () => {
    health.fail(full)
    const admitted = health.admitted()
    timers.advance(10_000)
    expect(await settled(admitted)).toBe('pending')
    room = true
    timers.advance(5000)
    expect(await settled(admitted)).toBe('resolved')
    expect(health.blocked).toBe(false)
    expect(said[1]).toMatch(
      /^resumed: the database \/data\/pacer\.db takes writes again after 1\d\.\d s/,
    )
    // Resumed: nothing more is scheduled.
    const looks = timers.delays.length
    timers.advance(60_000)
    expect(timers.delays.length).toBe(looks)
  })

  it('lets the writers of paid answers try first; the first commit that goes through resumes', async () => {
    health.fail(full)
    const held = health.hold(1200)
    health.hold(null)
    expect(health.held()).toEqual({ count: 2, costMicros: 1200, unpriced: 1 })
    const writer = health.retryWhenRoom()
    const admitted = health.admitted()
    room = true
    timers.advance(250)
    // A trial: the writer goes, admissions still wait for its commit.
    expect(await settled(writer)).toBe('resolved')
    expect(await settled(admitted)).toBe('pending')
    // It failed again: still blocked, no second line, the next look later.
    health.fail(full)
    expect(said).toHaveLength(1)
    const again = health.retryWhenRoom()
    timers.advance(500)
    expect(await settled(again)).toBe('resolved')
    held.release()
    health.committed()
    expect(await settled(admitted)).toBe('resolved')
    expect(said).toHaveLength(2)
    expect(health.held()).toEqual({ count: 1, costMicros: 0, unpriced: 1 })
  })

  it('a commit while the probe finds no room does not resume (a write that needed no new page)', () => {
    health.fail(full)
    health.committed()
    expect(health.blocked).toBe(true)
  })

  it('a stop rejects the admissions waiting and the writers waiting on their signal', async () => {
    health.fail(full)
    const admitted = health.admitted()
    const stop = new AbortController()
    const writer = health.retryWhenRoom(stop.signal)
    health.cancelAdmissions(new Error('stop'))
    stop.abort(new Error('stop'))
    expect(await settled(admitted)).toBe('rejected')
    expect(await settled(writer)).toBe('rejected')
  })
})

describe('StepWrites on a file SQLite says is full', () => {
  let dir: string
  let file: string
  let db: Database.Database
  let health: WriteHealth
  let scope: StepWrites
  const fill = () => db.pragma('max_page_count = 1')
  const write = (text: string) =>
    scope.run(() => db.prepare('INSERT INTO names(name) VALUES (?)').run(text))
  const big = (i: number) => `${i}:${'x'.repeat(3000)}`

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'pacer-full-'))
    file = path.join(dir, 'pacer.db')
    db = openDatabase(file)
    health = new WriteHealth({ dbPath: file, probe: () => roomToWrite(db, file) })
    scope = new StepWrites(db, { onError: () => {}, health })
  })
  afterEach(() => {
    health.close()
    db.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a failed write blocks, a lost transaction rejects durable(since) for what was picked in it', async () => {
    write('before')
    await scope.durable()
    const since = scope.generation
    write('picked')
    const picked = scope.generation
    expect(picked).toBeGreaterThan(since)
    fill()
    expect(() => {
      for (let i = 0; i < 100; i++) write(big(i))
    }).toThrow(/full/)
    expect(health.blocked).toBe(true)
    expect(roomToWrite(db, file)).toBe(false)
    // SQLite rolled the whole transaction back (SQLITE_FULL may): the commit finds it gone.
    scope.commit()
    expect(db.prepare("SELECT COUNT(*) AS n FROM names WHERE name = 'picked'").get()).toEqual({
      n: 0,
    })
    // A task picked in it must not send: once admissions resume, its gate says the pick is lost.
    const gate = scope.durable(picked)
    db.pragma('max_page_count = 1000000')
    await expect(gate).rejects.toBeInstanceOf(LostWrites)
    expect(health.blocked).toBe(false)
    write('after')
    // A pick after the loss is not held to it.
    await scope.durable(scope.generation)
    expect(db.prepare("SELECT COUNT(*) AS n FROM names WHERE name = 'after'").get()).toEqual({
      n: 1,
    })
  })
})
