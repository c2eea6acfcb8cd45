// A full disk under a real `pacer run`, against a loopback provider that counts what it is sent.
// SQLite's page limit makes the disk "full": PRAGMA max_page_count is per connection, so the run's
// own connections follow a file, set by a module preloaded into the child (helpers/page-limit.cjs,
// through NODE_OPTIONS: nothing in the product knows of it): "1" caps the database at its current
// size, a large number frees it. While full the run sends nothing, says so once, does
// not spin, and answers Ctrl-C / SIGTERM with exit 3 and the lost answers; once freed (or rerun)
// the batch completes with each distinct task executed once and the ledger's counts honest.
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import {
  closeVendors,
  fakeVendor,
  useVendor,
  variedUsage,
  type FakeVendor,
} from '../../helpers/fake-vendor'
import { query, runPacer, shuffle, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'

afterEach(closeVendors)

const RUN = ['--provider', 'openai-compatible', '--model', 'm', '--json']
const FREE = '1000000000'
const PAGE_LIMIT = resolve(__dirname, '../../helpers/page-limit.cjs')

/**
 * `agents`: every sixth distinct task a 2-step one; `allAgents`: every one, each followed in the
 * file by its duplicates (the full disk then often falls between a task's steps, or between a
 * waiting duplicate's reuse and its end).
 */
async function setUp(latencyMs: number, agents = true, allAgents = false) {
  const server = await fakeVendor({ latencyMs, usage: variedUsage })
  const dir = tempDir('pacer-diskfull-')
  const db = join(dir, 'pacer.db')
  await useVendor(db, server, {
    prices: { m: { input: 3, cachedInput: 3, cacheWrite: 3, output: 15 } },
  })
  const limit = join(dir, 'page-limit')
  writeFileSync(limit, FREE)
  // 60 distinct tasks (with agents, every sixth a 2-step one) and 30 duplicates.
  const distinct = Array.from({ length: 60 }, (_, i) => ({
    type: 'summarize',
    payload: { prompt: `disk full task ${i}: ${'words '.repeat(40)}` },
    ...(allAgents || (agents && i % 6 === 0) ? { steps: 2 } : {}),
  }))
  const dupeOf = (j: number) => (j * 7) % 60
  const dupes = Array.from({ length: 30 }, (_, j) => ({ ...distinct[dupeOf(j)]! }))
  const adjacent = distinct.flatMap((t, i) => [t, ...dupes.filter((_, j) => dupeOf(j) === i)])
  const file = writeJsonl(
    dir,
    'batch.jsonl',
    allAgents ? adjacent : shuffle([...distinct, ...dupes], 3),
  )
  const env = {
    PACER_TEST_PAGE_LIMIT_FILE: limit,
    NODE_OPTIONS:
      `${process.env['NODE_OPTIONS'] ?? ''} --require ${JSON.stringify(PAGE_LIMIT)}`.trim(),
    // The preload swaps better-sqlite3 in require's cache, which the built CLI's ES module import
    // does not read: these children run the same code from its sources.
    PACER_FROM_SOURCE: '1',
  }
  return { server, dir, db, limit, file, env, distinct }
}

/** Seconds of CPU the process used so far (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ".
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const lines = (stderr: string, re: RegExp) => stderr.split('\n').filter((l) => re.test(l))
const BLOCKED = /cannot take writes \(database or disk is full; .+ free on its filesystem\)/

/** Each distinct task's prompt was sent this many times (its last step's request). */
function executionsOf(server: FakeVendor, distinct: { payload: { prompt: string } }[]) {
  return distinct.map(
    (t) => server.requestsOf(t.payload.prompt).filter((a) => a.messages.length === 1).length,
  )
}

interface LedgerCount {
  outcome: string
  n: number
}

/** The ledger's honest counts: executed rows per fingerprint's first step, and the outcomes. */
function ledgerOf(db: string) {
  const outcomes = Object.fromEntries(
    query<LedgerCount>(db, 'SELECT outcome, COUNT(*) AS n FROM ledger GROUP BY outcome').map(
      (r) => [r.outcome, r.n],
    ),
  )
  const billedTwice = query<{ fp: string }>(
    db,
    `SELECT fp FROM ledger WHERE outcome IN ('executed', 'duplicate') AND step = 1
     GROUP BY fp HAVING COUNT(*) > 1`,
  )
  const selfReused = query<{ n: number }>(
    db,
    `SELECT COUNT(*) AS n FROM ledger r WHERE r.outcome = 'reused' AND EXISTS (
       SELECT 1 FROM ledger e WHERE e.fp = r.fp AND e.task_id = r.task_id AND e.outcome = 'executed')`,
  )[0]!.n
  return { outcomes, billedTwice: billedTwice.length, selfReused }
}

/**
 * The run ended with every distinct task executed once and every duplicate reused, on the server
 * and on the ledger (`executedRows`: the ledger's executed rows, a row per step).
 */
function expectEachOnce(
  stdout: string,
  server: FakeVendor,
  distinct: { payload: { prompt: string } }[],
  db: string,
  executedRows: number,
) {
  const summary = JSON.parse(stdout) as RunSummary
  expect(summary).toMatchObject({ tasks: 90, distinct: 60, executed: 60, reused: 30 })
  expect(summary).toMatchObject({ failed: 0, duplicates: 0, wastedUsd: 0, queued: 0 })
  expect(executionsOf(server, distinct)).toEqual(distinct.map(() => 1))
  const ledger = ledgerOf(db)
  expect(ledger).toMatchObject({ billedTwice: 0, selfReused: 0 })
  expect(ledger.outcomes).toMatchObject({ executed: executedRows, reused: 30 })
  expect(ledger.outcomes['duplicate']).toBeUndefined()
}

describe.skipIf(process.platform !== 'linux')('pacer run with a full disk', () => {
  it('stops sending, says so once, does not spin, and completes every task once when space comes back', async () => {
    const { server, db, limit, file, env, distinct } = await setUp(120)
    const run = startPacer(['run', file, '--db', db, ...RUN], env)
    await until(() => server.answers.length >= 10)
    writeFileSync(limit, '1')
    await until(() => BLOCKED.test(run.output().stderr))
    // What was already on its way lands; after that nothing more is sent while the disk is full.
    await until(() => server.open === 0)
    const sent = server.answers.length
    const cpu = cpuSeconds(run.child.pid!)
    const started = Date.now()
    await new Promise((r) => setTimeout(r, 4000))
    const cpuShare = (cpuSeconds(run.child.pid!) - cpu) / ((Date.now() - started) / 1000)
    expect(server.answers.length).toBe(sent)
    // Today's busy loop took a whole core; waiting with backoff takes next to nothing.
    expect(cpuShare).toBeLessThan(0.25)
    expect(sent).toBeLessThan(90)

    writeFileSync(limit, FREE)
    const end = await run.done
    expect(end.code, end.stderr).toBe(0)
    expect(lines(end.stderr, BLOCKED)).toHaveLength(1)
    expect(lines(end.stderr, /takes writes again after .* s: sending resumes/)).toHaveLength(1)
    expect(lines(end.stderr, /warning/)).toHaveLength(2)
    // Each distinct task was sent once, and the ledger says so.
    expectEachOnce(end.stdout, server, distinct, db, 70)
    const statuses = query<{ status: string; n: number }>(
      db,
      'SELECT status, COUNT(*) AS n FROM tasks GROUP BY status ORDER BY status',
    )
    expect(statuses).toEqual([
      { status: 'reused', n: 30 },
      { status: 'succeeded', n: 60 },
    ])
  }, 90_000)

  it('counts each execution and each reuse once when the disk fills between steps and reuses', async () => {
    // Without the fixes: a step's journal intent lost to the full disk gave the claim back between
    // paid steps and a duplicate ran the rest (executed 61 / reused 29); a reuse's ledger row was
    // written apart from its task's end and a rolled-back write took it (reused 29); a claim lost
    // to a rollback left its epoch to be handed out again, its holder released the next owner's
    // claim and a third task sent the first call again (duplicates 1, reused 29).
    const { server, db, limit, file, env, distinct } = await setUp(120, true, true)
    const run = startPacer(['run', file, '--db', db, ...RUN], env)
    await until(() => server.answers.length >= 10)
    writeFileSync(limit, '1')
    await until(() => BLOCKED.test(run.output().stderr))
    await until(() => server.open === 0)
    // Full for a while (the scenario's length, not a wait for a result): the waiting duplicates'
    // reuses and ends meet it, not only the calls.
    await new Promise((r) => setTimeout(r, 4000))
    writeFileSync(limit, FREE)
    const end = await run.done
    expect(end.code, end.stderr).toBe(0)
    expectEachOnce(end.stdout, server, distinct, db, 120)
  }, 90_000)

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'answers %s while full with exit 3 and the lost answers; a rerun after space is freed completes the batch',
    async (signal) => {
      // One step each: a stopped agent gives its claim back and runs its steps again on resume
      // (as after any Ctrl-C, until calls are journaled), which is not what this test is about.
      const { server, db, limit, file, env, distinct } = await setUp(120, false)
      // Short leases: the rerun takes over the claims the stopped run could not give back.
      const run = startPacer(['run', file, '--db', db, ...RUN, '--lease', '3'], env)
      await until(() => server.answers.length >= 10)
      writeFileSync(limit, '1')
      await until(() => BLOCKED.test(run.output().stderr))
      const signalled = Date.now()
      run.child.kill(signal)
      const end = await run.done
      expect(Date.now() - signalled).toBeLessThan(15_000)
      expect(end.code, end.stderr).toBe(3)
      const lost = lines(
        end.stderr,
        /^pacer: lost \d+ paid answer\(s\) \(\$[\d.]+\): the database .* still cannot take writes/,
      )
      expect(lost, end.stderr).toHaveLength(1)
      const lostCount = Number(/lost (\d+)/.exec(lost[0]!)![1])

      writeFileSync(limit, FREE)
      // A stopped run's counts and claims left behind must not keep the rerun from ending.
      const again = await runPacer(['run', file, '--db', db, ...RUN, '--lease', '3'], env)
      expect(again.code, again.stderr).toBe(0)
      const statuses = query<{ status: string }>(db, 'SELECT DISTINCT status FROM tasks')
      expect(statuses.map((s) => s.status).sort()).toEqual(['reused', 'succeeded'])
      // Only the answers said to be lost were paid for again; nothing reused its own result.
      const executions = executionsOf(server, distinct)
      expect(executions.every((n) => n === 1 || n === 2)).toBe(true)
      expect(executions.filter((n) => n === 2).length).toBeLessThanOrEqual(lostCount)
      const ledger = ledgerOf(db)
      expect(ledger.selfReused).toBe(0)
      expect(ledger.billedTwice).toBeLessThanOrEqual(lostCount)
      // Every call the server answered is on the ledger, but for lost answers it never got to.
      const paidRows = (ledger.outcomes['executed'] ?? 0) + (ledger.outcomes['duplicate'] ?? 0)
      expect(server.answers.length - paidRows).toBeGreaterThanOrEqual(0)
      expect(server.answers.length - paidRows).toBeLessThanOrEqual(lostCount)
    },
    90_000,
  )
})
