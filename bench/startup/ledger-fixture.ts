// A database with an n-row ledger for bench:startup, built fast and cached in the temp folder: a
// real `pacer run` of a small batch on the near-instant simulator (so every table and rollup is
// what the engine writes), then its ledger rows copied with direct SQL until there are n, spread
// back in time a minute per copy so the time rollups have many buckets, and the rollups folded.
// Keyed by n and the schema's migration count: a new migration builds a new one.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openDatabase } from '../../src/main/engine/db'
import { MIGRATIONS } from '../../src/main/engine/db/migrations'
import { LedgerRollups } from '../../src/main/engine/ledger/rollups'
import { taskOf } from '../scale/batch'

const ROOT = path.resolve(__dirname, '../..')
const SEED_TASKS = 2_000
const COLUMNS = `ts, task_id, batch, fp_id, worker, label, step, input_tokens, cached_input_tokens,
  cache_write_tokens, output_tokens, cost_micros, saved_micros, outcome, latency_ms, status, epoch`

/** The path of a database whose ledger has `rows` rows, built on the first call. */
export function ledgerFixture(rows: number): string {
  const file = path.join(tmpdir(), `pacer-startup-ledger-${rows}-m${MIGRATIONS.length}.db`)
  if (existsSync(file)) return file
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-startup-fixture-'))
  try {
    const building = path.join(dir, 'ledger.db')
    const batch = path.join(dir, 'batch.jsonl')
    process.stderr.write(`bench:startup: building a ${rows.toLocaleString('en-US')}-row ledger…\n`)
    const seed = spawnSync(
      process.execPath,
      [path.join(ROOT, 'bin/run-ts.cjs'), path.join(ROOT, 'bench/scale/cli-child.ts')].concat(
        seedArgs(batch, building),
      ),
      {
        cwd: ROOT,
        env: { ...process.env, PACER_BENCH_STATS: path.join(dir, 'stats.json'), HOME: dir },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    if (seed.status !== 0) throw new Error(`seeding the ledger failed: ${String(seed.stderr)}`)
    grow(building, rows)
    renameSync(building, file)
    return file
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function seedArgs(batch: string, db: string): string[] {
  const lines = Array.from({ length: SEED_TASKS }, (_, i) => JSON.stringify(taskOf(i, SEED_TASKS)))
  writeFileSync(batch, `${lines.join('\n')}\n`)
  return ['run', batch, '--db', db, '--json', '--sim-latency-scale', '0', '--sim-rpm', '0']
}

/** Copies the ledger's rows until there are `rows`, then folds the rollups over them all. */
function grow(file: string, rows: number): void {
  const db = openDatabase(file)
  const count = db.prepare('SELECT COUNT(*) FROM ledger_rows').pluck()
  const seed = count.get() as number
  const copy = db.prepare(
    `INSERT INTO ledger_rows (${COLUMNS})
     SELECT ts - @shift, task_id, batch, fp_id, worker, label, step, input_tokens,
       cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, saved_micros, outcome,
       latency_ms, status, epoch
     FROM ledger_rows WHERE id <= @seed LIMIT @take`,
  )
  db.transaction(() => {
    for (let k = 1, have = seed; have < rows; k++) {
      const take = Math.min(seed, rows - have)
      copy.run({ shift: k * 60_000, seed, take })
      have += take
    }
  })()
  new LedgerRollups(db)
  db.close()
}
