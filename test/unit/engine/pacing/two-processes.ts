// Two schedulers on two connections to one SQLite file: what two processes on one database see.
// Fake timers for the wake-ups and one fake clock for now(), moved together by `pass`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { vi } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { controllerFactory } from '../../../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { SqlitePacingStore } from '../../../../src/main/engine/pacing/store-sqlite'
import { fakeClock } from '../../../helpers/clock'

const T0 = 1_000_000
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve))
const dirs: string[] = []
const dbs: Database.Database[] = []
const schedulers: Scheduler[] = []

/** Closes what twoProcesses opened (for afterEach). */
export function closeTwoProcesses(): void {
  for (const s of schedulers.splice(0)) s.close()
  for (const db of dbs.splice(0)) db.close()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  vi.useRealTimers()
}

/**
 * Two schedulers, each with its own store on its own connection to one file (`lean`: a worker
 * alone leases the partition in blocks), and a third connection that only looks.
 */
export function twoProcesses(params: { initial: number; max: number }, lean: boolean) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-two-'))
  dirs.push(dir)
  const file = path.join(dir, 'pacer.db')
  const clock = fakeClock(T0)
  const [a, b] = ['w1', 'w2'].map((worker) => {
    const db = openDatabase(file)
    dbs.push(db)
    const s = new Scheduler({
      clock,
      createController: controllerFactory('adaptive'),
      pacing: { random: () => 0.5 },
      params,
      store: new SqlitePacingStore({ db, lean }),
      worker,
    })
    schedulers.push(s)
    return s
  }) as [Scheduler, Scheduler]
  const pass = async (ms: number) => {
    clock.advance(ms)
    vi.advanceTimersByTime(ms)
    await flush()
  }
  const look = openDatabase(file)
  dbs.push(look)
  return { a, b, pass, look, clock }
}
