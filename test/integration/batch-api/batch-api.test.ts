// pacer run --batch-api through both vendors' doubles, as a user runs it: real child processes, a
// real SQLite file, the doubles on loopback with a clock the test moves.
import { afterEach, describe, expect, it } from 'vitest'
import { query, runPacer } from '../../helpers/cli'
import type { FakeClock } from '../../helpers/clock'
import { until } from '../../helpers/until'
import {
  harness,
  ledgerCost,
  LIST_PRICES,
  results,
  type Dialect,
  type Harness,
} from './batch-helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const DIALECTS: Dialect[] = ['openai', 'anthropic']

/** 2,000 lines, 1,200 distinct tasks; every tenth distinct one takes two steps. */
function bigBatch(): unknown[] {
  return Array.from({ length: 2000 }, (_, i) => {
    const q = i % 1200
    return { type: 'label', payload: { text: `item ${q}` }, steps: q % 10 === 0 ? 2 : 1 }
  })
}

describe.each(DIALECTS)('--batch-api through the %s double', (dialect) => {
  it('2,000 tasks (1,200 distinct, some multi-step): each request once, the double’s answers, its bill', async () => {
    h = await harness({ errorShare: 0.03, seed: 5 })
    const file = h.file('big.jsonl', bigBatch())
    h.tick()
    const r = await h.run(dialect, file)
    // Errored lines fail their tasks (a deterministic 400 from the vendor): exit 1.
    expect([0, 1]).toContain(r.code)
    expect(r.stderr).toMatch(/provider batch \S+ \(.*1200 requests\)/)
    expect(r.stderr).toMatch(/the discount saved \$/)

    const submitted = h.submitted(dialect)
    // Each distinct request submitted exactly once: no custom_id twice, across every round.
    expect(new Set(submitted).size).toBe(submitted.length)
    const calls = query<{ step: number; n: number }>(
      h.db,
      `SELECT step, COUNT(*) AS n FROM ledger WHERE outcome IN ('executed', 'error') GROUP BY step ORDER BY step`,
    )
    expect(calls[0]).toEqual({ step: 1, n: 1200 })
    expect(calls[1]!.n).toBeGreaterThan(100)
    expect(calls[1]!.n).toBeLessThanOrEqual(120)
    expect(calls.reduce((s, c) => s + c.n, 0)).toBe(submitted.length)

    // The answers are what the double produced.
    const answers = new Set(h.vendor.answers().values())
    const records = await results(h.db)
    expect(records).toHaveLength(2000)
    const ok = records.filter((x) => x.status === 'succeeded' || x.status === 'reused')
    expect(ok.length).toBeGreaterThan(1800)
    for (const x of ok) expect(answers.has(x.text!)).toBe(true)
    expect(records.filter((x) => x.origin === 'reused').length).toBeGreaterThan(700)

    // The ledger is priced at the batch rate and equals the double's own bill.
    const bill = h.vendor.billMicros(LIST_PRICES)
    const cost = ledgerCost(h.db)
    expect(bill).toBeGreaterThan(0)
    expect(cost.batchMicros).toBe(bill)
    expect(cost.totalMicros).toBe(bill)
    expect(cost.batchRows).toBe(h.vendor.answers().size)
  }, 300_000)

  it('SIGKILL after submission, rerun: no second submission, the results arrive', async () => {
    h = await harness({ errorShare: 0 })
    const file = h.file(
      'kill.jsonl',
      Array.from({ length: 40 }, (_, i) => ({ type: 'k', payload: { i } })),
    )
    // A short lease: the rerun takes the killed process's claims over once it has lapsed.
    const first = h.start(dialect, file, ['--lease', '3'])
    // The clock stands still: the batch stays in progress while the process is killed.
    await until(() => /provider batch \S+ .*40 requests/.test(first.output().stderr), 60_000)
    const ids = query<{ remote_id: string | null }>(h.db, 'SELECT remote_id FROM provider_batches')
    expect(ids).toHaveLength(1)
    expect(ids[0]!.remote_id).toMatch(/^(batch|msgbatch)_/)
    first.child.kill('SIGKILL')
    await first.done
    expect(h.submitted(dialect)).toHaveLength(40)

    h.tick()
    const again = await h.run(dialect, file, ['--lease', '3'])
    expect(again.code).toBe(0)
    expect(h.submitted(dialect)).toHaveLength(40)
    expect(query(h.db, 'SELECT id FROM provider_batches')).toHaveLength(1)
    const records = await results(h.db)
    expect(records.every((x) => x.status === 'succeeded')).toBe(true)
    const answers = new Set(h.vendor.answers().values())
    for (const x of records) expect(answers.has(x.text!)).toBe(true)
    // Nothing paid twice: no 'answer lost' duplicate for the calls the first process sent.
    expect(query(h.db, "SELECT id FROM ledger WHERE outcome = 'duplicate'")).toEqual([])
    expect(ledgerCost(h.db).totalMicros).toBe(h.vendor.billMicros(LIST_PRICES))
  }, 300_000)

  it("an expired batch's unfinished lines are resubmitted with --retry-failed, and only those", async () => {
    const HOUR = 3_600_000
    h = await harness({ errorShare: 0, processMs: 48 * HOUR })
    const file = h.file(
      'slow.jsonl',
      Array.from({ length: 30 }, (_, i) => ({ type: 's', payload: { i } })),
    )
    h.tick(HOUR)
    const first = await h.run(dialect, file)
    expect(first.code).toBe(1)
    expect(first.stderr).toMatch(/expired/)
    const kept = h.vendor.answers().size
    expect(kept).toBeGreaterThan(5)
    expect(kept).toBeLessThan(25)
    const before = [...h.submitted(dialect)]
    const done = new Set(h.vendor.answers().keys())
    const expired = before.filter((id) => !done.has(id))

    // The vendor is quick again; the rerun sends exactly the lines that expired.
    h.vendor.openai.options.processMs = 60_000
    h.vendor.anthropic.options.processMs = 60_000
    h.tick()
    const retry = await h.run(dialect, file, ['--retry-failed'])
    expect(retry.code).toBe(0)
    expect(h.submitted(dialect).slice(before.length).sort()).toEqual(expired.sort())
    const records = await results(h.db)
    // The retry's own batch: the expired lines answered now, the others reused from the first run.
    expect(records.filter((x) => x.status === 'succeeded')).toHaveLength(expired.length)
    const unanswered = records.filter((x) => x.status !== 'succeeded' && x.status !== 'reused')
    expect(unanswered, retry.stderr).toEqual([])
    expect(ledgerCost(h.db).totalMicros).toBe(h.vendor.billMicros(LIST_PRICES))
  }, 300_000)

  it('pacer provider-batches cancel keeps the lines that finished, priced', async () => {
    h = await harness({ errorShare: 0, processMs: 100_000 })
    const file = h.file(
      'cancel.jsonl',
      Array.from({ length: 20 }, (_, i) => ({ type: 'c', payload: { i } })),
    )
    const run = h.start(dialect, file)
    await until(() => /provider batch \S+ .*20 requests/.test(run.output().stderr), 60_000)
    // Half-way through: validation (1 s) and half the lines.
    ;(h.vendor.clock as FakeClock).advance(1_000 + 50_000)
    const remoteId = query<{ remote_id: string }>(
      h.db,
      'SELECT remote_id FROM provider_batches',
    )[0]!.remote_id
    const base = dialect === 'openai' ? h.vendor.openaiBase : h.vendor.url
    const cancel = await runPacer(
      ['provider-batches', 'cancel', remoteId, '--db', h.db, '--base-url', base],
      h.env(dialect),
    )
    expect(cancel.stderr).toMatch(/cancel asked/)
    expect(cancel.code).toBe(0)
    h.tick()
    const r = await run.done
    expect(r.code).toBe(1)
    const records = await results(h.db)
    const ok = records.filter((x) => x.status === 'succeeded')
    expect(ok).toHaveLength(10)
    expect(records.filter((x) => x.status === 'failed')).toHaveLength(10)
    expect(ledgerCost(h.db).totalMicros).toBe(h.vendor.billMicros(LIST_PRICES))
    const list = await runPacer(['provider-batches', '--db', h.db])
    expect(list.stdout).toMatch(new RegExp(`${remoteId} .*(cancelled|ended)`))
  }, 300_000)
})

it('a server without batch endpoints: the run stops with one line saying so', async () => {
  h = await harness({ batchEndpoints: false })
  const file = h.file('none.jsonl', [{ type: 'n', payload: { i: 1 } }])
  const r = await h.run('openai', file)
  expect(r.code).toBe(4)
  // Said once as the run stops (and repeated in the summary's list of stopped partitions).
  const lines = r.stderr.split('\n').filter((l) => /stopped: .*no batch endpoints/.test(l))
  expect(lines.length).toBeGreaterThanOrEqual(1)
  expect(lines.length).toBeLessThanOrEqual(2)
  expect(r.stderr).not.toMatch(/failed tasks by reason/)
  expect(lines[0]).toMatch(/answered 404.*run without --batch-api/)
  expect(h.vendor.openai.submitted).toEqual([])
}, 120_000)
