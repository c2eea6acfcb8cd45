// Issue 21, before the run: `pacer forecast` names the caps a batch would hit (kept ones, with
// what their period already spent and holds in doubt, and --budget) and at which task; `pacer run`
// refuses a batch whose input alone passes a cap, sending nothing, unless --up-to-cap; the stop
// line gives the forecast cost of the held rest; an unpriced model under a kept cap is refused.
// Against a loopback OpenAI-speaking vendor that counts requests and bills known usage.
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import type { CapForecastView } from '../../../src/shared/contract'
import { formatUsd } from '../../../src/shared/format'
import { query, runOnVendor, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor, variedUsage } from '../../helpers/fake-vendor'

afterEach(closeVendors)

// USD per 1M tokens = micro-dollars per token: the vendor's bill is integer arithmetic.
const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const FLAGS = ['--max-tokens', '20', '--initial-concurrency', '8']

/** N tasks of one size (the same prompt length), naming the vendor's model, one a line. */
function batchFile(dir: string, name: string, n: number): string {
  const tasks = Array.from({ length: n }, (_, i) => ({
    type: 'classify',
    provider: 'openai-compatible',
    model: 'local',
    payload: { prompt: `${name}-task-${String(i).padStart(4, '0')}` },
  }))
  return writeJsonl(dir, `${name}.jsonl`, tasks)
}

type CapJson = CapForecastView

async function forecastJson(
  file: string,
  db: string,
  extra: string[] = [],
): Promise<{ total: { tasks: number; costMicros: number }; caps: CapJson[] }> {
  const f = await runPacer(['forecast', file, '--db', db, '--json', ...extra])
  expect(f.code, f.stderr).toBe(0)
  return JSON.parse(f.stdout) as { total: { tasks: number; costMicros: number }; caps: CapJson[] }
}

async function setCap(db: string, args: string[]): Promise<void> {
  const set = await runPacer(['budgets', 'set', ...args, '--db', db])
  expect(set.code, set.stderr).toBe(0)
}

async function removeCaps(db: string): Promise<void> {
  for (const { id } of query<{ id: number }>(db, 'SELECT id FROM spend_caps')) {
    const removed = await runPacer(['budgets', 'remove', String(id), '--db', db])
    expect(removed.code, removed.stderr).toBe(0)
  }
}

describe('spend caps before the run', () => {
  it('pacer forecast names the caps a batch would hit, with what the period holds, and at which task', async () => {
    const vendor = await fakeVendor({ dialect: 'openai', usage: variedUsage })
    const dir = tempDir('pacer-cap-forecast-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor, { prices: { local: PRICE } })
    await setCap(db, ['0.01', '--daily'])
    await setCap(db, ['1', '--model', 'openai-compatible/local'])
    await setCap(db, ['0.0001', '--type', 'summarize'])
    // Some of today's spend first, and a dead process's call in doubt (as its sweep leaves it).
    const before = await runOnVendor(batchFile(dir, 'before', 5), db, FLAGS).done
    expect(before.code, before.stderr).toBe(0)
    const raw = new Database(db)
    raw.prepare('UPDATE spend_cap_periods SET presumed_micros = 700 WHERE cap = 1').run()
    raw.close()
    const [ledger] = query<{ cost: number }>(db, 'SELECT SUM(cost_micros) AS cost FROM ledger')
    expect(ledger!.cost).toBeGreaterThan(0)

    const file = batchFile(dir, 'batch', 100)
    const f = await forecastJson(file, db, ['--budget', '0.005', '--assume-output-tokens', '20'])
    // Every task is the same size: each costs the same, and the hit is simple arithmetic.
    const perTask = f.total.costMicros / 100
    expect(Number.isInteger(perTask)).toBe(true)
    // The run's cap, then the kept caps that cover a task (not the summarize one).
    expect(f.caps.map((c) => c.capId)).toEqual([null, 1, 2])
    const [run, daily, model] = f.caps as [CapJson, CapJson, CapJson]
    expect(run).toMatchObject({ capMicros: 5000, spentMicros: 0, tasks: 100 })
    expect(run.hitAt).toEqual({
      task: Math.floor(5000 / perTask) + 1,
      line: Math.floor(5000 / perTask) + 1,
    })
    const spent = ledger!.cost + 700
    expect(daily).toMatchObject({
      capMicros: 10_000,
      spentMicros: spent,
      reservedMicros: 0,
      leftMicros: 10_000 - spent,
      forecastMicros: f.total.costMicros,
    })
    const hit = Math.floor((10_000 - spent) / perTask) + 1
    expect(daily.hitAt).toEqual({ task: hit, line: hit })
    expect(daily.periodKey).toMatch(/^\d{4}-\d\d-\d\d$/)
    expect(model.hitAt).toBeNull()

    const text = await runPacer([
      'forecast',
      file,
      '--db',
      db,
      '--budget',
      '0.005',
      '--assume-output-tokens',
      '20',
    ])
    expect(text.code, text.stderr).toBe(0)
    const capLines = text.stdout.split('\n').filter((l) => l.startsWith('cap: '))
    expect(capLines).toHaveLength(3)
    expect(capLines[0]).toMatch(
      /^cap: would hit the run's cap \(--budget\) \(\$0\.0050, \$0\.0000 spent, \$0\.0050 left\): forecast \$[\d.]+, held from about task \d+ of 100 \(line \d+\) on$/,
    )
    expect(capLines[1]).toContain(
      `would hit the daily cap (UTC) on all spend for ${daily.periodKey} ($0.0100,`,
    )
    expect(capLines[1]).toContain(`held from about task ${hit} of 100 (line ${hit}) on`)
    expect(capLines[2]).toMatch(/^cap: fits under the cap on openai-compatible\/local \(\$1\.0000,/)
    // A forecast sends nothing.
    expect(vendor.requests.length).toBe(5)
  }, 120_000)

  // Each call's worst case (its request's bytes, 20 output tokens) is about $0.0003 and its
  // input alone some $0.000004: a $0.001 cap lets a few calls through, and 400 tasks' input
  // alone passes it.
  const TASKS = 400

  it('pacer run refuses a batch whose input alone passes a cap, sending nothing; --up-to-cap runs it to the cap and says what the rest would cost', async () => {
    const vendor = await fakeVendor({ dialect: 'openai', latencyMs: 20, usage: variedUsage })
    const dir = tempDir('pacer-cap-minimum-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor, { prices: { local: PRICE } })
    const file = batchFile(dir, 'batch', TASKS)
    const f = await forecastJson(file, db)
    const { caps: none } = f
    expect(none).toEqual([])
    await setCap(db, ['0.001', '--daily'])
    const [daily] = (await forecastJson(file, db)).caps
    // The batch's input alone is more than the cap: nothing of it can be paid in full.
    expect(daily!.minimumMicros).toBeGreaterThan(1000)
    expect(daily!.minimumPasses).toBe(true)

    const refused = await runOnVendor(file, db, FLAGS).done
    expect(refused.code, refused.stderr).toBe(5)
    expect(vendor.requests.length).toBe(0)
    const lines = refused.stderr.split('\n').filter((l) => l.includes('refused to start'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe(
      `pacer: refused to start: the input alone of its ${TASKS} task(s) under the daily cap (UTC) on all spend for ${daily!.periodKey} costs at least ${formatUsd(daily!.minimumMicros)}, and the cap is $0.0010 with $0.0000 spent; nothing was sent. Raise it (pacer budgets set (cap 1)), or add --up-to-cap to run until the cap holds the rest`,
    )
    const [batch] = query<{ state: string; stop_reason: string }>(
      db,
      'SELECT state, stop_reason FROM batches',
    )
    expect(batch!.state).toBe('interrupted')
    expect(batch!.stop_reason).toMatch(/^held by budget: the input alone of its 400 task/)

    // The run's own cap refuses the same way.
    const byRun = await runOnVendor(file, db, ['--budget', '0.0005', ...FLAGS]).done
    expect(byRun.code, byRun.stderr).toBe(5)
    expect(byRun.stderr).toMatch(
      /refused to start: .* under the run's cap \(--budget\) costs at least/,
    )
    expect(vendor.requests.length).toBe(0)

    const upTo = await runOnVendor(file, db, ['--budget', '1', '--up-to-cap', ...FLAGS]).done
    expect(upTo.code, upTo.stderr).toBe(5)
    const bill = vendor.answers.reduce(
      (sum, a) => sum + a.usage.input * PRICE.input + a.usage.output * PRICE.output,
      0,
    )
    expect(vendor.requests.length).toBeGreaterThan(0)
    expect(bill).toBeLessThanOrEqual(1000)
    // The rest: the queued tasks at the forecast's cost of one (all the same size).
    const [{ n: queued }] = query<{ n: number }>(
      db,
      "SELECT COUNT(*) AS n FROM tasks WHERE status = 'queued'",
    ) as [{ n: number }]
    expect(queued).toBeGreaterThan(0)
    expect(queued).toBe(TASKS - vendor.answers.length)
    const rest = (f.total.costMicros / TASKS) * queued
    expect(upTo.stderr).toContain(
      `${queued} task(s) not started are held (queued), forecast ${formatUsd(rest)} to finish: raise the cap`,
    )
    const report = JSON.parse(upTo.stdout) as { budget: { restForecastUsd: number } }
    expect(report.budget.restForecastUsd).toBe(rest / 1e6)
  }, 120_000)

  it('refuses an unpriced model under a kept cap (daily, or on the model) in one line, sending nothing', async () => {
    const vendor = await fakeVendor({ dialect: 'openai' })
    const dir = tempDir('pacer-cap-unpriced-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor)
    const file = batchFile(dir, 'batch', 3)
    const refusedLine = async (cap: RegExp) => {
      const run = await runOnVendor(file, db, FLAGS).done
      expect(run.code, run.stderr).toBe(2)
      const lines = run.stderr.split('\n').filter((l) => l.includes('has no price'))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(
        /^pacer: openai-compatible\/local has no price, so a budget cannot bound its calls: nothing was sent\. Price it with an override \(console: Settings > Price overrides; `pacer prices local` says what matches\), or take it out of /,
      )
      expect(lines[0]).toMatch(cap)
      expect(vendor.requests.length).toBe(0)
    }
    await setCap(db, ['5', '--daily'])
    await refusedLine(/the daily cap \(UTC\) on all spend, id 1 \(pacer budgets remove\)$/)
    await removeCaps(db)
    await setCap(db, ['5', '--model', 'openai-compatible/local'])
    await refusedLine(/the cap on openai-compatible\/local, id \d+ \(pacer budgets remove\)$/)
    // A cap on another model does not cover it: it runs.
    await removeCaps(db)
    await setCap(db, ['5', '--model', 'openai/gpt-4o'])
    const run = await runOnVendor(file, db, FLAGS).done
    expect(run.code, run.stderr).toBe(0)
    expect(vendor.requests.length).toBe(3)
  }, 120_000)
})
