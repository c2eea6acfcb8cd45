// The database and helpers of spend-budget.test.ts: one batch, two connections for two processes.
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { openDatabase } from '../../../../src/main/engine/db'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { SpendBudget } from '../../../../src/main/engine/pacing/spend-budget'
import { fakeClock } from '../../../helpers/clock'
import { tempDir } from '../../../helpers/cli'

/** The connections a test opened; its afterEach closes them. */
export const open: Database.Database[] = []

export const TASKS = 12
// What the kept caps know of every call here.
export const SCOPE = { batchId: 'b1', taskType: 'classify', provider: 'sim', model: 'sim-1' }
// A kept cap on all spend for all time (UTC); each test narrows it.
export const KEPT = {
  taskType: null,
  provider: null,
  model: null,
  period: 'total',
  zone: 'UTC',
} as const
export const WORKERS = ['w0', 'w1']

let template: string | undefined

/** A database with one batch and TASKS running tasks, task i run by worker i % 2. */
export function setup(capMicros: number | null) {
  // Migrated once, copied for each run: the property makes a database per run.
  if (!template) {
    template = join(tempDir('pacer-spend-budget-'), 'template.db')
    openDatabase(template).close()
  }
  const path = join(tempDir('pacer-spend-budget-'), 'pacer.db')
  copyFileSync(template, path)
  const first = openDatabase(path)
  first
    .prepare(
      `INSERT INTO batches(key, id, name, state, created_at, updated_at, budget_micros)
       VALUES (1, 'b1', 'b1', 'running', 0, 0, ?)`,
    )
    .run(capMicros)
  const task = first.prepare(
    'INSERT INTO task_queue(id, batch, seq, fp_id, status, worker) VALUES (?, 1, ?, ?, 1, ?)',
  )
  for (let i = 0; i < TASKS; i++) task.run(i + 1, i, i + 1, WORKERS[i % 2])
  const second = openDatabase(path)
  open.push(first, second)
  const clock = fakeClock()
  const prices = new Prices()
  const budgets = [first, second].map((db) => new SpendBudget({ db, prices, clock }))
  return { db: first, dbs: [first, second], budgets, clock }
}

/** Settles as the runner does: in its ledger row's transaction (a cap set again refolds from it). */
export function settleWithRow(
  db: Database.Database,
  budget: SpendBudget,
  at: number,
  id: number,
  cost: number,
) {
  db.transaction(() => {
    db.prepare(
      `INSERT OR IGNORE INTO ledger_labels(id, task_type, provider, model) VALUES (1, ?, ?, ?)`,
    ).run(SCOPE.taskType, SCOPE.provider, SCOPE.model)
    db.prepare(
      `INSERT INTO ledger_rows(ts, fp_id, worker, label, step, cost_micros, outcome) VALUES (?, 1, 1, 1, 0, ?, 0)`,
    ).run(at, cost)
    budget.settle(SCOPE, id, cost)
  })()
}

export function books(db: Database.Database) {
  return db
    .prepare(
      `SELECT budget_micros AS cap, budget_spent_micros AS spent,
         (SELECT COALESCE(SUM(micros), 0) FROM budget_reservations) AS reserved
       FROM batches WHERE id = 'b1'`,
    )
    .get() as { cap: number; spent: number; reserved: number }
}

/** Reserves for task `task` as the worker that runs it now (its reservation is live till then). */
export function reserveAs(
  db: Database.Database,
  budget: SpendBudget,
  task: number,
  micros: number,
) {
  const worker = db
    .prepare('SELECT worker FROM task_queue WHERE id = ?')
    .pluck()
    .get(task + 1) as string
  const r = budget.reserve({ ...SCOPE, taskId: task + 1, worker, micros })
  return { r, worker }
}
