// Every pacing store against the one contract (store-suite.ts), and what only the SQLite file
// adds: two connections on one file are two processes' view, polling included.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import type { PacingStore } from '../../../../src/main/engine/pacing/store'
import { MemoryPacingStore } from '../../../../src/main/engine/pacing/store-memory'
import { SqlitePacingStore } from '../../../../src/main/engine/pacing/store-sqlite'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { FakeClock } from '../../../helpers/clock'
import { until } from '../../../helpers/until'
import { pacingStoreSuite, type StoreHandles } from './store-suite'

const dirs: string[] = []

function sqliteHandles(leaseMs: number): StoreHandles {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-pacing-'))
  dirs.push(dir)
  const file = path.join(dir, 'pacer.db')
  const dbA = openDatabase(file)
  const dbB = openDatabase(file)
  return {
    a: new SqlitePacingStore({ db: dbA, leaseMs }),
    b: new SqlitePacingStore({ db: dbB, leaseMs }),
    close() {
      dbA.close()
      dbB.close()
    },
  }
}

/**
 * The memory store answering a turn later, as a networked store does: the contract, and the
 * scheduler on top of it, must not depend on answers arriving at once.
 */
function later(inner: PacingStore): PacingStore {
  const defer =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): Promise<Awaited<R>> =>
      new Promise<Awaited<R>>((resolve, reject) =>
        setImmediate(() => {
          try {
            resolve(fn(...args) as Awaited<R>)
          } catch (err) {
            reject(err)
          }
        }),
      )
  const b = bound(inner)
  return {
    leaseMs: inner.leaseMs,
    poll: { minMs: 1, maxMs: 10 },
    join: defer(b.join),
    admit: defer(b.admit),
    release: defer(b.release),
    update: defer(b.update),
    record: defer(b.record),
    budget: defer(b.budget),
    heartbeat: defer(b.heartbeat),
    partitions: defer(b.partitions),
    subscribe: b.subscribe,
  }
}

/** The store's methods on a plain object, so a test can replace one. */
function bound(inner: PacingStore): PacingStore {
  return {
    leaseMs: inner.leaseMs,
    poll: inner.poll,
    join: inner.join.bind(inner),
    admit: inner.admit.bind(inner),
    release: inner.release.bind(inner),
    update: inner.update.bind(inner),
    record: inner.record.bind(inner),
    budget: inner.budget.bind(inner),
    heartbeat: inner.heartbeat.bind(inner),
    partitions: inner.partitions.bind(inner),
    subscribe: inner.subscribe.bind(inner),
  }
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

pacingStoreSuite('memory', (leaseMs) => {
  const store = new MemoryPacingStore({ leaseMs })
  return { a: store, b: store, close() {} }
})

pacingStoreSuite('SQLite (two connections on one file)', sqliteHandles)

pacingStoreSuite('a store that answers later (memory, deferred)', (leaseMs) => {
  const store = later(new MemoryPacingStore({ leaseMs }))
  return { a: store, b: store, close() {} }
})

describe('a Scheduler on a store that fails', () => {
  it('reports the failure as a warning, and admits once the store answers again', async () => {
    const inner = new MemoryPacingStore()
    let failures = 2
    const store = bound(inner)
    store.admit = (...args) => {
      if (failures-- > 0) throw new Error('SQLITE_BUSY: database is locked')
      return inner.admit(...args)
    }
    const s = new Scheduler({ clock: new FakeClock(), store, worker: 'w' })
    const warnings: string[] = []
    s.on('warning', (m) => warnings.push(m))
    const permit = await s.acquire('p')
    expect(warnings).toEqual([
      'pacing store (p): SQLITE_BUSY: database is locked',
      'pacing store (p): SQLITE_BUSY: database is locked',
    ])
    permit.release('ok')
    expect(s.snapshot()[0]).toMatchObject({ inflight: 0, successes: 1 })
    s.close()
  })

  it('refuses a store or worker that is not one, naming the value', () => {
    expect(() => new Scheduler({ store: {} as PacingStore })).toThrow(/`store`.*PacingStore/)
    expect(() => new Scheduler({ worker: '' })).toThrow(/`worker`.*non-empty/)
  })
})

describe('SqlitePacingStore', () => {
  const schedulers: Scheduler[] = []
  afterEach(() => {
    for (const s of schedulers.splice(0)) s.close()
  })

  it("a scheduler that died gives its slots back after its lease; the other's waiters get them by polling", async () => {
    const h = sqliteHandles(500)
    const clock = new FakeClock(1_000_000)
    const dead = new Scheduler({ clock, store: h.a, worker: 'dead', params: { initial: 3 } })
    const alive = new Scheduler({ clock, store: h.b, worker: 'alive', params: { initial: 3 } })
    schedulers.push(dead, alive)
    await Promise.all([1, 2, 3].map(() => dead.acquire('p')))
    // It stops without releasing, as a killed process does: no heartbeat, no release.
    dead.close()
    let admitted = 0
    const polls = vi.spyOn(h.b, 'admit')
    const waiting = [1, 2, 3].map(() => alive.acquire('p').then(() => admitted++))
    // Refused while the lease runs: the waiters have asked again, and still none got a slot.
    await until(() => polls.mock.calls.length >= 6 || undefined, 20_000, 5)
    expect(admitted).toBe(0)
    clock.advance(501)
    await until(() => admitted === 3 || undefined, 5000, 5)
    await Promise.all(waiting)
    expect(alive.view()).toMatchObject([{ partition: 'p', inflight: 3, workers: 1 }])
    h.close()
  })

  it('refuses a lease or poll interval that is not a whole number of ms', () => {
    const h = sqliteHandles(1000)
    const db = openDatabase(path.join(dirs.at(-1) as string, 'pacer.db'))
    expect(() => new SqlitePacingStore({ db, leaseMs: 0 })).toThrow(/`leaseMs`.*`0`/)
    expect(() => new SqlitePacingStore({ db, pollMinMs: 1.5 })).toThrow(/`pollMinMs`/)
    expect(() => new SqlitePacingStore({ db, pollMinMs: 20, pollMaxMs: 10 })).toThrow(
      /`pollMaxMs`.*>= 20/,
    )
    expect(() => new MemoryPacingStore({ leaseMs: -1 })).toThrow(/`leaseMs`/)
    db.close()
    h.close()
  })
})
