// Who each process on the database is: its worker id (batches.driver, claims' owner, a running
// task's worker), its machine and pid, and until when it has said it is alive. A rerun of a killed
// `pacer run` reads this to resume the batch at once instead of waiting for leases to run out.
// The table: db/migrations/010-workers.ts.
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import type Database from 'better-sqlite3'
import type { BatchOwner } from '../../../shared/contract'
import { directWrites, type WriteScope } from '../db/step-writes'
import type { Clock } from '../core/types'

/** A process as the registry knows it. */
export interface WorkerInfo {
  id: string
  host: string
  boot: string | null
  pid: number
  procStart: string | null
  startedAt: number
  aliveUntil: number
}

/** What this machine can tell about a pid. */
export interface ProcessProbe {
  host: string
  boot: string | null
  /** Whether a process with this pid runs here (a zombie does not count). */
  running(pid: number): boolean
  /** The process's start as the OS counts it; null when this OS cannot say. */
  startOf(pid: number): string | null
}

/** The probe of the machine this process runs on. */
export function localProbe(): ProcessProbe {
  return {
    host: hostname(),
    boot: readText('/proc/sys/kernel/random/boot_id'),
    running: (pid) => {
      try {
        process.kill(pid, 0)
      } catch (err) {
        // EPERM: it exists, it is someone else's.
        return (err as NodeJS.ErrnoException).code === 'EPERM'
      }
      // A killed child its parent has not reaped yet still answers kill(0).
      return procStat(pid)?.state !== 'Z'
    },
    startOf: (pid) => procStat(pid)?.start ?? null,
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    return null
  }
}

/** Fields 3 (state) and 22 (start time in clock ticks since boot) of /proc/PID/stat. */
function procStat(pid: number): { state: string; start: string } | null {
  const text = readText(`/proc/${pid}/stat`)
  if (text === null) return null
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { state: fields[0] ?? '', start: fields[19] ?? '' }
}

/**
 * Why the worker is gone, or null while it may still be running. On its own machine the pid
 * decides (and its start time, so a reused pid is not taken for it); where the OS cannot give the
 * start time, and for other machines, the heartbeat does.
 */
export function goneReason(w: WorkerInfo, probe: ProcessProbe, now: number): string | null {
  const sameMachine = w.host === probe.host && w.boot === probe.boot
  if (sameMachine) {
    if (!probe.running(w.pid)) return `pid ${w.pid} on ${w.host} is not running`
    const start = w.procStart === null ? null : probe.startOf(w.pid)
    if (start !== null) {
      return start === w.procStart ? null : `pid ${w.pid} on ${w.host} is another process now`
    }
  }
  if (w.aliveUntil < now) {
    const s = Math.round((now - w.aliveUntil) / 1000)
    return `no heartbeat from pid ${w.pid} on ${w.host} for ${s} s past its lease`
  }
  return null
}

/** The driver of a batch as `pacer batches` and the console show it. */
export type OwnerView = BatchOwner

type WorkerDbRow = {
  id: string
  host: string
  boot: string | null
  pid: number
  proc_start: string | null
  started_at: number
  alive_until: number
}

/** A worker id is `host:pid:random` (parts.ts): what can be said of one the registry lost. */
function parseWorkerId(id: string): { host: string | null; pid: number | null } {
  const m = /^(.*):(\d+):[0-9a-f]+$/.exec(id)
  return m ? { host: m[1]!, pid: Number(m[2]) } : { host: null, pid: null }
}

// A batch summary is read every 200 ms while a run shows its progress: judge at most this often.
const VIEW_TTL_MS = 1000

/**
 * The workers table: this process's row (registered, renewed on a timer, removed at shutdown) and
 * every other's, judged alive or gone. A database opened read only is only read.
 */
export class WorkerRegistry {
  readonly id: string
  readonly #db: Database.Database
  readonly #clock: Clock
  readonly #writes: WriteScope
  readonly #probe: ProcessProbe
  readonly #leaseMs: number
  readonly #pid: number
  readonly #all: Database.Statement<[], WorkerDbRow>
  #timer: NodeJS.Timeout | undefined
  #views: { at: number; byId: Map<string, OwnerView>; missing: Set<string> } | null = null

  constructor(opts: {
    db: Database.Database
    clock: Clock
    id: string
    /** How long a heartbeat holds; renewed every third of it. @default 30_000 */
    leaseMs?: number
    writes?: WriteScope
    probe?: ProcessProbe
    /** @default process.pid */
    pid?: number
  }) {
    this.#db = opts.db
    this.#clock = opts.clock
    this.id = opts.id
    this.#leaseMs = opts.leaseMs ?? 30_000
    this.#writes = opts.writes ?? directWrites
    this.#probe = opts.probe ?? localProbe()
    this.#pid = opts.pid ?? process.pid
    this.#all = opts.db.prepare('SELECT * FROM workers')
  }

  /** Adds this process's row and renews it every third of the lease until stop(). */
  start(onError: (err: Error) => void): void {
    if (this.#db.readonly || this.#timer) return
    this.#beat()
    this.#timer = setInterval(
      () => {
        try {
          this.#beat()
        } catch (err) {
          onError(err as Error)
        }
      },
      Math.max(50, Math.floor(this.#leaseMs / 3)),
    )
    this.#timer.unref()
  }

  /** Removes this process's row: it stopped on purpose, nothing of it is left to repair. */
  stop(): void {
    if (!this.#timer) return
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#writes.run(() => this.#db.prepare('DELETE FROM workers WHERE id = ?').run(this.id))
  }

  // An upsert, not an update: another process that wrongly judged this one gone (no heartbeat
  // through a long stall) removed the row, and this one must come back.
  #beat(): void {
    const now = this.#clock.now()
    const pid = this.#pid
    this.#writes.run(() =>
      this.#db
        .prepare(
          `INSERT INTO workers(id, host, boot, pid, proc_start, started_at, alive_until)
           VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(id) DO UPDATE SET alive_until = excluded.alive_until`,
        )
        .run(
          this.id,
          this.#probe.host,
          this.#probe.boot,
          pid,
          this.#probe.startOf(pid),
          now,
          now + this.#leaseMs,
        ),
    )
  }

  /** Every other registered worker that is gone, with why. */
  gone(): { id: string; reason: string }[] {
    const now = this.#clock.now()
    const out: { id: string; reason: string }[] = []
    for (const r of this.#all.all()) {
      if (r.id === this.id) continue
      const reason = goneReason(toInfo(r), this.#probe, now)
      if (reason !== null) out.push({ id: r.id, reason })
    }
    return out
  }

  /**
   * Forgets the rows of workers found gone (their work has been repaired), and ends the leases of
   * the provider slots they held (pacing/store-sqlite.ts), which would otherwise hold a partition's
   * concurrency down until they ran out. Inside the caller's transaction.
   */
  forget(ids: readonly string[]): void {
    if (ids.length === 0) return
    const del = this.#db.prepare('DELETE FROM workers WHERE id = ?')
    const slots = this.#db.prepare('UPDATE pacing_workers SET lease_until = 0 WHERE worker = ?')
    for (const id of ids) {
      del.run(id)
      slots.run(id)
    }
    this.#views = null
  }

  /** Whether `worker` is registered and not gone (this process always is). */
  alive(worker: string): boolean {
    return this.view(worker).alive
  }

  /** The driver `worker` as shown with its batch. A worker without a row is gone. */
  view(worker: string): OwnerView {
    const now = this.#clock.now()
    // A worker registered since the last read (another engine of this process driving a batch
    // it just took) is read again at once, not judged gone; a gone one is read again only once.
    const stale = this.#views && !this.#views.byId.has(worker) && !this.#views.missing.has(worker)
    if (!this.#views || stale || now - this.#views.at > VIEW_TTL_MS || now < this.#views.at) {
      const byId = new Map<string, OwnerView>()
      for (const r of this.#all.all()) {
        const gone = r.id === this.id ? null : goneReason(toInfo(r), this.#probe, now)
        byId.set(r.id, {
          worker: r.id,
          host: r.host,
          pid: r.pid,
          alive: gone === null,
          ...(gone === null ? {} : { gone }),
        })
      }
      this.#views = { at: now, byId, missing: new Set() }
    }
    const known = this.#views.byId.get(worker)
    if (known) return known
    this.#views.missing.add(worker)
    if (worker === this.id) return { worker, ...parseWorkerId(worker), alive: true }
    return { worker, ...parseWorkerId(worker), alive: false, gone: 'it is no longer registered' }
  }
}

function toInfo(r: WorkerDbRow): WorkerInfo {
  return {
    id: r.id,
    host: r.host,
    boot: r.boot,
    pid: r.pid,
    procStart: r.proc_start,
    startedAt: r.started_at,
    aliveUntil: r.alive_until,
  }
}
