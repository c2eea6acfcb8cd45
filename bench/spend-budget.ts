// What a spend cap costs per provider call: the budget's own work on the admission path (issue 21)
// on a real database file, 64 tasks running: the check that a cap applies (every call pays it),
// the reservation (one BEGIN IMMEDIATE transaction: sweep, read the spend and holds, insert), the
// sent mark and the settlement (in the ledger row's transaction, here one of its own). Uncapped,
// under a run's cap, and under a run's cap plus three kept caps (day, task type, model).
//
//   node bin/run-ts.cjs bench/spend-budget.ts [CALLS]   (default 20000)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { openDatabase } from '../src/main/engine/db'
import { systemClock } from '../src/main/engine/core/types'
import { SpendBudget } from '../src/main/engine/pacing/spend-budget'
import { Prices } from '../src/main/engine/pricing/prices'

const CALLS = Number(process.argv[2] ?? 20_000)
const TASKS = 64
const SCOPE = { batchId: 'b1', taskType: 'classify', provider: 'openai', model: 'gpt-4o-mini' }
const KEPT = { taskType: null, provider: null, model: null, period: 'total', zone: 'UTC' } as const

function setup(kind: 'none' | 'run' | 'kept') {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-bench-spend-'))
  const db = openDatabase(path.join(dir, 'pacer.db'))
  const cap = kind === 'none' ? null : 1e12
  db.prepare(
    `INSERT INTO batches(key, id, name, state, created_at, updated_at, budget_micros)
     VALUES (1, 'b1', 'b1', 'running', 0, 0, ?)`,
  ).run(cap)
  const task = db.prepare(
    'INSERT INTO task_queue(id, batch, seq, fp_id, status, worker) VALUES (?, 1, ?, ?, 1, ?)',
  )
  for (let i = 0; i < TASKS; i++) task.run(i + 1, i, i + 1, 'w0')
  const budget = new SpendBudget({ db, prices: new Prices(), clock: systemClock })
  if (kind === 'kept') {
    budget.setScopedCap({ ...KEPT, period: 'day' }, 1e12)
    budget.setScopedCap({ ...KEPT, taskType: 'classify' }, 1e12)
    budget.setScopedCap({ ...KEPT, provider: 'openai', model: 'gpt-4o-mini' }, 1e12)
  }
  const settle = db.transaction((id: number | null) => budget.settle(SCOPE, id, 90))
  return { dir, db, budget, settle }
}

function run(kind: 'none' | 'run' | 'kept'): number {
  const { dir, db, budget, settle } = setup(kind)
  // Up to TASKS reservations outstanding, as with 64 calls in flight.
  const open: (number | null)[] = []
  const start = performance.now()
  for (let i = 0; i < CALLS; i++) {
    let id: number | null = null
    if (budget.applies(SCOPE)) {
      const r = budget.reserve({ ...SCOPE, taskId: (i % TASKS) + 1, worker: 'w0', micros: 100 })
      if (r.kind !== 'reserved') throw new Error(`unexpected ${r.kind}`)
      id = r.id
      budget.markSent(id)
    }
    open.push(id)
    if (open.length >= TASKS) settle(open.shift()!)
  }
  for (const id of open) settle(id)
  const us = ((performance.now() - start) * 1000) / CALLS
  db.close()
  rmSync(dir, { recursive: true, force: true })
  return us
}

const kinds = ['none', 'run', 'kept'] as const
const best: Record<string, number> = {}
for (let round = 0; round < 3; round++) {
  for (const k of kinds) best[k] = Math.min(best[k] ?? Infinity, run(k))
}
console.log(`spend budget per call, ${CALLS} calls, ${TASKS} in flight (best of 3):`)
console.log(`  no cap (the check only, and a settle)        ${best['none']!.toFixed(1)} µs`)
console.log(`  the run's cap: reserve + sent + settle       ${best['run']!.toFixed(1)} µs`)
console.log(`  the run's cap + 3 kept caps                  ${best['kept']!.toFixed(1)} µs`)
if (!(best['kept']! > 0)) process.exitCode = 1
