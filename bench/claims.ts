// Claim+complete throughput of the SQLite claim store against plain single-row autocommit INSERTs
// into a table of the same shape, with the same file settings (openDatabase: WAL,
// synchronous=NORMAL), measured in the same run. Rounds alternate baseline and claims and the
// median is reported, so that load from other programs on the machine hits both sides alike.
// Then 4 processes on one file with overlapping key sets, checking that no fingerprint was
// completed twice.
//
//   node bin/run-ts.cjs bench/claims.ts [N]   N fingerprints per round and phase (default 20000)
//   node bin/run-ts.cjs bench/claims.ts child  internal: one of the racing processes (stdin driven)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import type Database from 'better-sqlite3'
import { SqliteClaimStore } from '../src/main/engine/claims/claims'
import { openDatabase } from '../src/main/engine/db'
import { fingerprint } from '../src/main/engine/core/fingerprint'

const ROUNDS = 3
const PROCESSES = 4
const LEASE_MS = 60_000
const RUN_TS = path.resolve(__dirname, '../bin/run-ts.cjs')

const fp = (i: number): string => fingerprint('bench', { i })
const range = (from: number, to: number): string[] =>
  Array.from({ length: to - from }, (_, i) => fp(from + i))

function createBaselineTable(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS bench_baseline (
    fp TEXT PRIMARY KEY, state TEXT NOT NULL, owner TEXT NOT NULL, epoch INTEGER NOT NULL,
    lease_until INTEGER NOT NULL, claimed_at INTEGER NOT NULL
  )`)
}

interface Phase {
  ms: number
  attempts: number
  owned: string[]
  reused: number
  busy: number
  completeFailures: number
}

/** Plain autocommit INSERTs: the cheapest durable write of one claim-sized row. */
function baseline(db: Database.Database, keys: string[], worker: string): Phase {
  const insert = db.prepare("INSERT INTO bench_baseline VALUES (?, 'running', ?, 1, 0, 0)")
  const t0 = performance.now()
  for (const key of keys) insert.run(key, worker)
  const ms = performance.now() - t0
  return { ms, attempts: keys.length, owned: [], reused: 0, busy: 0, completeFailures: 0 }
}

/** What a worker does per task, minus the task: claim, and complete what it owns. */
function claims(store: SqliteClaimStore, keys: string[], worker: string): Phase {
  const owned: string[] = []
  let reused = 0
  let busy = 0
  let completeFailures = 0
  const t0 = performance.now()
  for (const key of keys) {
    const attempt = store.claim(key, worker, LEASE_MS)
    if (attempt.kind === 'owned') {
      if (store.complete(key, attempt.epoch, '{"ok":true}', 'succeeded')) owned.push(key)
      else completeFailures++
    } else if (attempt.kind === 'completed') {
      reused++
    } else {
      busy++
    }
  }
  const ms = performance.now() - t0
  return { ms, attempts: keys.length, owned, reused, busy, completeFailures }
}

// ---------------------------------------------------------------- child process

// Commands on stdin: `open MODE DB FROM TO` (answers `ready`), `go` (answers the Phase as JSON).
async function child(worker: string): Promise<void> {
  const lines = createInterface({ input: process.stdin })
  let run: (() => Phase) | undefined
  for await (const line of lines) {
    const [command, mode, dbPath, from, to] = line.split(' ')
    if (command === 'open') {
      const db = openDatabase(dbPath!)
      createBaselineTable(db)
      const store = new SqliteClaimStore({ db })
      // The baseline writes every row: its keys are distinct per process, no conflicts.
      const keys = range(Number(from), Number(to)).map((k) =>
        mode === 'baseline' ? worker + k : k,
      )
      run = () => {
        const phase = mode === 'baseline' ? baseline(db, keys, worker) : claims(store, keys, worker)
        db.close()
        return phase
      }
      process.stdout.write('ready\n')
    } else if (command === 'go' && run !== undefined) {
      process.stdout.write(`${JSON.stringify(run())}\n`)
      run = undefined
    }
  }
}

class Worker {
  readonly #stdin: NodeJS.WritableStream
  readonly #lines: AsyncIterator<string>

  constructor(readonly name: string) {
    const proc = spawn(process.execPath, [RUN_TS, __filename, 'child', name], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    this.#stdin = proc.stdin
    this.#lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]()
  }

  async ask(command: string): Promise<string> {
    this.#stdin.write(`${command}\n`)
    const r = await this.#lines.next()
    if (r.done === true) throw new Error(`${this.name} exited during '${command}'`)
    return r.value
  }

  close(): void {
    this.#stdin.end()
  }
}

async function race(
  workers: Worker[],
  mode: string,
  dbPath: string,
  ranges: [number, number][],
): Promise<{ wallMs: number; phases: Phase[] }> {
  await Promise.all(workers.map((w, i) => w.ask(`open ${mode} ${dbPath} ${ranges[i]!.join(' ')}`)))
  const t0 = performance.now()
  const answers = await Promise.all(workers.map((w) => w.ask('go')))
  const wallMs = performance.now() - t0
  return { wallMs, phases: answers.map((a) => JSON.parse(a) as Phase) }
}

// ---------------------------------------------------------------- the bench

const perSecond = (ops: number, ms: number): number => Math.round((ops * 1000) / ms)
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const sum = (xs: number[]): number => xs.reduce((s, x) => s + x, 0)

function row(label: string, rates: number[], base: number): string {
  const m = median(rates)
  const spread = `${Math.min(...rates).toLocaleString('en-US')}–${Math.max(...rates).toLocaleString('en-US')}`
  return `  ${label.padEnd(38)}${m.toLocaleString('en-US').padStart(9)}   ${(m / base).toFixed(2).padStart(5)}   (${spread})`
}

async function main(n: number): Promise<boolean> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-bench-claims-'))
  const workers: Worker[] = []
  let ok = true
  try {
    console.log(
      `claims bench: ${n.toLocaleString('en-US')} fingerprints per phase, ${ROUNDS} rounds, ` +
        'WAL + synchronous=NORMAL; median (min–max)',
    )

    // ------------------------------------------------ single process
    const db = openDatabase(path.join(dir, 'single.db'))
    createBaselineTable(db)
    const store = new SqliteClaimStore({ db })
    baseline(db, range(-4000, -2000), 'warm') // JIT and page cache, not measured
    claims(store, range(-2000, 0), 'warm')
    const baseRates: number[] = []
    const claimRates: number[] = []
    const hitRates: number[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const b = baseline(
        db,
        range(r * n, (r + 1) * n).map((k) => `b${k}`),
        'w',
      )
      const keys = range(r * n, (r + 1) * n)
      const c = claims(store, keys, 'w')
      const h = claims(store, keys, 'w2')
      if (c.owned.length !== n || h.reused !== n) {
        console.log(`  ERROR round ${r}: owned ${c.owned.length}, reused ${h.reused} of ${n}`)
        ok = false
      }
      baseRates.push(perSecond(n, b.ms))
      claimRates.push(perSecond(n, c.ms))
      hitRates.push(perSecond(n, h.ms))
    }
    db.close()
    const base = median(baseRates)
    console.log('\nsingle process                                ops/s   ratio')
    console.log(row('baseline: autocommit INSERT, 1 row', baseRates, base))
    console.log(row('claim+complete (2 commits)', claimRates, base))
    console.log(row('claim of a completed fp (dedup hit)', hitRates, base))

    // ------------------------------------------------ 4 processes, one file
    // Each process takes a window of half the keys, shifted by an eighth: every key is wanted by
    // one to four processes.
    for (let i = 0; i < PROCESSES; i++) workers.push(new Worker(`p${i + 1}`))
    const windowSize = Math.floor(n / 2)
    const multiBase: number[] = []
    const multiAttempts: number[] = []
    const multiOwned: number[] = []
    const notes: string[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const offset = (r + 10) * n // fresh keys per round
      const ranges = Array.from({ length: PROCESSES }, (_, i): [number, number] => {
        const from = offset + Math.floor((i * n) / 8)
        return [from, from + windowSize]
      })
      const wanted = new Set<number>()
      for (const [from, to] of ranges) for (let k = from; k < to; k++) wanted.add(k)

      const b = await race(workers, 'baseline', path.join(dir, `multi-${r}.db`), ranges)
      multiBase.push(perSecond(sum(b.phases.map((p) => p.attempts)), b.wallMs))

      const claimsPath = path.join(dir, `multi-${r}.db`)
      const c = await race(workers, 'claims', claimsPath, ranges)
      const owned = c.phases.flatMap((p) => p.owned)
      multiAttempts.push(perSecond(sum(c.phases.map((p) => p.attempts)), c.wallMs))
      multiOwned.push(perSecond(owned.length, c.wallMs))

      const check = openDatabase(claimsPath)
      const stats = check
        .prepare(
          `SELECT COUNT(*) AS completed, MAX(epoch) AS maxEpoch FROM claims
           WHERE state = 'completed'`,
        )
        .get() as { completed: number; maxEpoch: number }
      check.close()
      const duplicates = owned.length - new Set(owned).size
      const failures = sum(c.phases.map((p) => p.completeFailures))
      const good =
        duplicates === 0 &&
        failures === 0 &&
        owned.length === wanted.size &&
        stats.completed === wanted.size &&
        stats.maxEpoch === 1
      if (!good) ok = false
      notes.push(
        `  round ${r + 1}: ${owned.length} owned of ${wanted.size} keys ` +
          `(${c.phases.map((p) => p.owned.length).join('/')}), ` +
          `${sum(c.phases.map((p) => p.reused))} reused, ${sum(c.phases.map((p) => p.busy))} busy; ` +
          `duplicate completions ${duplicates}, rows completed ${stats.completed}, ` +
          `max epoch ${stats.maxEpoch}: ${good ? 'OK' : 'ERROR'}`,
      )
    }
    const multiBaseMedian = median(multiBase)
    console.log(`\n${PROCESSES} processes, one file, overlapping keys        ops/s   ratio`)
    console.log(row('baseline: autocommit INSERT, 1 row', multiBase, multiBaseMedian))
    console.log(row('claim attempts (+complete if owned)', multiAttempts, multiBaseMedian))
    console.log(row('claim+complete that owned', multiOwned, multiBaseMedian))
    for (const note of notes) console.log(note)
  } finally {
    for (const w of workers) w.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return ok
}

const args = process.argv.slice(2)
const done =
  args[0] === 'child' ? child(args[1] ?? 'child').then(() => true) : main(Number(args[0] ?? 20_000))
done.then(
  (ok) => {
    if (!ok) process.exitCode = 1
  },
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
