/**
 * What the chaos run proves at its end, read from the database file as an auditor would and set
 * against what the provider says it served.
 */
import Database from 'better-sqlite3'
import type { Served } from './provider'

export interface Check {
  name: string
  /** The figure measured, and the one it must equal. */
  measured: number | string
  expected: number | string
  ok: boolean
}

interface LedgerTotals {
  executed: number
  duplicate: number
  replayed: number
  reused: number
  /** executed + duplicate rows; of them, lost answers' payments. */
  paid: number
  lost: number
  /** Calls the client gave up on in flight: abandoned (killed, stopped) or timed out. */
  givenUp: number
  /** Paid rows (lost answers aside) whose usage the provider did not give as numbers: estimated. */
  estimated: number
  input: number
  output: number
}

/** Every check, in the order they are printed. `batchIds` are the batches the files ended in. */
export function checkDatabase(dbPath: string, served: Served, distinctTasks: number): Check[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    const integrity = (db.pragma('integrity_check') as { integrity_check: string }[])
      .map((r) => r.integrity_check)
      .join('; ')
    const notDone = count(
      db,
      `SELECT count(*) AS n FROM tasks t
        WHERE t.batch_id IN (SELECT id FROM batches b WHERE b.created_at =
          (SELECT max(created_at) FROM batches b2 WHERE b2.source_hash = b.source_hash))
          AND t.status NOT IN ('succeeded', 'reused')`,
    )
    const doneFps = count(
      db,
      `SELECT count(*) AS n FROM claims WHERE state = 'completed' AND status = 'succeeded'`,
    )
    const executedTwice = count(
      db,
      `SELECT count(*) AS n FROM (SELECT 1 FROM ledger WHERE outcome = 'executed'
        GROUP BY fp_id, step HAVING count(*) > 1)`,
    )
    const running = count(db, `SELECT count(*) AS n FROM batches WHERE state = 'running'`)
    const zeroCost = count(
      db,
      `SELECT count(*) AS n FROM ledger WHERE outcome IN ('executed', 'duplicate')
        AND reason IS NULL AND (cost_micros IS NULL OR cost_micros = 0)`,
    )
    const t = ledgerTotals(db)
    const repeats = [...served.perConversation.values()].reduce((sum, n) => sum + n - 1, 0)
    return [
      check('every distinct task succeeded', doneFps, distinctTasks),
      check("tasks of the files' batches not done", notDone, 0),
      check('(execution, call) executed more than once', executedTwice, 0),
      // A lost answer's payment (reason 'answer lost', estimated) is ledgered from the intent of a
      // call that was in flight when its process died: an upper bound, since the request may not
      // have reached the provider. Every other paid row is one the provider billed. What the
      // ledger cannot know is a call given up on (killed, aborted, timed out) after the provider
      // started: billed, with no answer. Each way the gap is bounded by those calls.
      atMost('paid rows, lost answers aside <= answers billed', t.paid - t.lost, served.calls),
      atMost('billed, not on the ledger <= calls given up', served.calls - t.paid, t.givenUp),
      atMost('ledgered, not billed <= lost answers ledgered', t.paid - served.calls, t.lost),
      atMost('rows ledgered duplicate <= billed twice + lost', t.duplicate, repeats + t.lost),
      // Garbage usage (hostileUsage) is estimated and flagged: a row for each answer, never $0.
      atMost(
        'answers with garbage usage, not ledgered estimated <= given up',
        served.hostileUsage - t.estimated,
        t.givenUp,
      ),
      atMost(
        'rows estimated, lost answers aside <= garbage usage served',
        t.estimated,
        served.hostileUsage,
      ),
      check('paid rows at $0 (lost answers aside)', zeroCost, 0),
      atMost('input tokens, lost answers aside <= served', t.input, served.inputTokens),
      atMost('output tokens, lost answers aside <= served', t.output, served.outputTokens),
      check('PRAGMA integrity_check', integrity, 'ok'),
      check('batches left running', running, 0),
    ]
  } finally {
    db.close()
  }
}

function check(name: string, measured: number | string, expected: number | string): Check {
  return { name, measured, expected, ok: measured === expected }
}

function atMost(name: string, measured: number, bound: number): Check {
  return { name, measured, expected: `<= ${bound}`, ok: measured <= bound }
}

function count(db: Database.Database, sql: string): number {
  return (db.prepare(sql).get() as { n: number }).n
}

function ledgerTotals(db: Database.Database): LedgerTotals {
  const rows = db
    .prepare(
      `SELECT outcome, count(*) AS n, sum(reason IS NOT NULL) AS lost,
         sum(reason IS NULL AND estimated = 1) AS estimated,
         sum(CASE WHEN reason IS NULL AND estimated = 0 THEN input_tokens END) AS input,
         sum(CASE WHEN reason IS NULL AND estimated = 0 THEN output_tokens END) AS output
       FROM ledger GROUP BY outcome`,
    )
    .all() as {
    outcome: string
    n: number
    lost: number
    estimated: number
    input: number
    output: number
  }[]
  const by = new Map(rows.map((r) => [r.outcome, r]))
  const paid = ['executed', 'duplicate'].map((o) => by.get(o))
  const executed = by.get('executed')?.n ?? 0
  const duplicate = by.get('duplicate')?.n ?? 0
  return {
    executed,
    duplicate,
    paid: executed + duplicate,
    lost: by.get('duplicate')?.lost ?? 0,
    estimated: paid.reduce((sum, r) => sum + (r?.estimated ?? 0), 0),
    replayed: by.get('replayed')?.n ?? 0,
    reused: by.get('reused')?.n ?? 0,
    givenUp: (by.get('abandoned')?.n ?? 0) + (by.get('timeout')?.n ?? 0),
    input: paid.reduce((s, r) => s + (r?.input ?? 0), 0),
    output: paid.reduce((s, r) => s + (r?.output ?? 0), 0),
  }
}

/** The checks as a table, one line each: ✓/✗, name, measured (expected). */
export function formatChecks(checks: readonly Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length))
  return checks
    .map((c) => {
      const mark = c.ok ? 'ok  ' : 'FAIL'
      const want = c.ok ? '' : `   (expected ${c.expected})`
      return `  ${mark} ${c.name.padEnd(width)}  ${c.measured}${want}`
    })
    .join('\n')
}
