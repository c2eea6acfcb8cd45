// The worker registry: who is gone (a dead or reused pid here, no heartbeat from elsewhere), and what
// the queue frees of a gone worker at once: its running tasks, its claims' leases, its batches.
import { spawnSync } from 'node:child_process'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SqliteClaimStore } from '../../../../src/main/engine/claims/claims'
import { TaskQueue, type NewTask } from '../../../../src/main/engine/queue/queue'
import {
  goneReason,
  localProbe,
  WorkerRegistry,
  type ProcessProbe,
  type WorkerInfo,
} from '../../../../src/main/engine/queue/workers'
import { fakeClock, type FakeClock } from '../../../helpers/clock'
import { openLedgerDb } from '../../../helpers/ledger-db'
import { until } from '../../../helpers/until'

/** A machine where only the pids in `running` run, each started at the given tick. */
function probe(running: Record<number, string | null>, host = 'here', boot = 'b1'): ProcessProbe {
  return {
    host,
    boot,
    running: (pid) => pid in running,
    startOf: (pid) => running[pid] ?? null,
  }
}

const worker = (over: Partial<WorkerInfo> = {}): WorkerInfo => ({
  id: 'here:100:aa',
  host: 'here',
  boot: 'b1',
  pid: 100,
  procStart: '5000',
  startedAt: 0,
  aliveUntil: 30_000,
  ...over,
})

describe('goneReason', () => {
  it('on its own machine the pid decides: not running is gone at once, heartbeat or not', () => {
    expect(goneReason(worker(), probe({}), 1_000)).toBe('pid 100 on here is not running')
    expect(goneReason(worker(), probe({ 100: '5000' }), 1_000)).toBeNull()
  })

  it('a pid reused by another process (another start time) is gone', () => {
    expect(goneReason(worker(), probe({ 100: '7777' }), 1_000)).toBe(
      'pid 100 on here is another process now',
    )
  })

  it('its own live process with a late heartbeat (a long stall) is not gone', () => {
    expect(goneReason(worker(), probe({ 100: '5000' }), 90_000)).toBeNull()
  })

  it('where the start time is unknown, a running pid is alive only while its heartbeat holds', () => {
    const noStart = worker({ procStart: null })
    expect(goneReason(noStart, probe({ 100: null }), 1_000)).toBeNull()
    expect(goneReason(noStart, probe({ 100: null }), 40_000)).toBe(
      'no heartbeat from pid 100 on here for 10 s past its lease',
    )
  })

  it('on another machine (or after a reboot) only the heartbeat tells', () => {
    const elsewhere = worker({ host: 'there' })
    expect(goneReason(elsewhere, probe({}), 29_000)).toBeNull()
    expect(goneReason(elsewhere, probe({}), 31_000)).toMatch(/^no heartbeat from pid 100 on there/)
    const beforeReboot = worker({ boot: 'b0' })
    expect(goneReason(beforeReboot, probe({}), 29_000)).toBeNull()
    expect(goneReason(beforeReboot, probe({}), 31_000)).not.toBeNull()
  })
})

describe('localProbe', () => {
  it('sees this process running with a start time, and an exited child as not running', () => {
    const here = localProbe()
    expect(here.running(process.pid)).toBe(true)
    if (process.platform === 'linux') expect(here.startOf(process.pid)).toMatch(/^\d+$/)
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
    expect(here.running(Number(child.stdout.toString()))).toBe(false)
  })
})

const LEASE_MS = 30_000

function task(seq: number): NewTask {
  return {
    seq,
    type: 't',
    payloadJson: `{"n":${seq}}`,
    fp: `fp${seq}`,
    key: null,
    steps: 1,
    provider: 'sim',
    model: 'sim-small',
  }
}

describe('a gone worker, repaired by the next sweep', () => {
  let store: ReturnType<typeof openLedgerDb>
  let clock: FakeClock
  const machine: Record<number, string | null> = {}

  beforeEach(() => {
    store = openLedgerDb()
    clock = fakeClock()
    for (const pid of Object.keys(machine)) delete machine[Number(pid)]
  })
  afterEach(() => store.close())

  /** A registry for a process with this pid on the shared fake machine. */
  function registry(pid: number): WorkerRegistry {
    machine[pid] = `start-${pid}`
    const r = new WorkerRegistry({
      db: store.db,
      clock,
      id: `here:${pid}:ab`,
      leaseMs: LEASE_MS,
      probe: probe(machine),
      pid,
    })
    r.start(() => {})
    return r
  }

  it('frees its running tasks and claims at once and interrupts the batch it drove', () => {
    const dead = registry(100)
    const deadQueue = new TaskQueue(store.db, clock, undefined, dead)
    const claims = new SqliteClaimStore({ db: store.db, clock })
    const id = deadQueue.createBatch(
      { name: 'f', source: '/f.jsonl', sourceHash: 'h', audit: false, driver: dead.id },
      [task(1), task(2)],
    )
    const [picked] = deadQueue.pickMany(dead.id, LEASE_MS, [id], 1)
    expect(claims.claim(picked!.fp, dead.id, LEASE_MS)).toMatchObject({ kind: 'owned', epoch: 1 })

    const live = registry(200)
    const queue = new TaskQueue(store.db, clock, undefined, live)
    // Alive, nothing to repair.
    expect(queue.requeueExpired()).toEqual({ requeued: 0, batchIds: [] })
    expect(queue.batch(id)).toMatchObject({ state: 'running', owner: { pid: 100, alive: true } })

    // Killed: shown interrupted at once, and the next sweep repairs it, long before the lease.
    delete machine[100]
    clock.advance(1_500)
    expect(queue.batch(id)).toMatchObject({
      state: 'interrupted',
      owner: { worker: dead.id, host: 'here', pid: 100, alive: false },
    })
    expect(queue.requeueExpired()).toEqual({ requeued: 1, batchIds: [id] })
    expect(queue.batch(id)).toMatchObject({ state: 'interrupted', counts: { queued: 2 } })
    expect(store.db.prepare('SELECT id FROM workers').pluck().all()).toEqual([live.id])
    // Its claim is taken over now by the usual compare-and-set, as after its lease.
    expect(claims.claim(picked!.fp, live.id, LEASE_MS)).toMatchObject({
      kind: 'owned',
      epoch: 2,
      tookOver: true,
      previousOwner: dead.id,
    })
    expect(queue.findResumable('h')).toBe(id)
  })

  it('a running batch whose driver is not registered at all is interrupted', () => {
    const live = registry(200)
    const queue = new TaskQueue(store.db, clock, undefined, live)
    const orphan = queue.createBatch(
      { name: 'old', source: null, sourceHash: null, audit: false, driver: 'old-host:7:ff' },
      [task(1)],
    )
    const own = queue.createBatch(
      { name: 'mine', source: null, sourceHash: null, audit: false, driver: live.id },
      [task(2)],
    )
    const consoles = queue.createBatch(
      { name: 'console', source: null, sourceHash: null, audit: false },
      [task(3)],
    )
    expect(queue.batch(orphan)).toMatchObject({
      state: 'interrupted',
      owner: { host: 'old-host', pid: 7, alive: false, gone: 'it is no longer registered' },
    })
    expect(queue.requeueExpired()).toEqual({ requeued: 0, batchIds: [orphan] })
    expect(queue.batch(own)).toMatchObject({ state: 'running', owner: { alive: true } })
    expect(queue.batch(consoles)?.state).toBe('running')
    expect(queue.batch(consoles)?.owner).toBeUndefined()
  })

  it('a row removed by a wrong judgement comes back with the next heartbeat; stop removes it', async () => {
    const r = new WorkerRegistry({ db: store.db, clock, id: 'here:300:ab', leaseMs: 150 })
    r.start(() => {})
    const rows = () => store.db.prepare('SELECT id FROM workers').pluck().all()
    expect(rows()).toEqual(['here:300:ab'])
    store.db.prepare('DELETE FROM workers').run()
    await until(() => rows().length === 1)
    r.stop()
    expect(rows()).toEqual([])
  })
})
