// Team mode's `--retry-failed`: a failure kept as a task's result is the team's result too, so
// every machine reuses it until the cause is fixed; then one machine's `--retry-failed` runs each
// failed distinct task once more, and every other machine reuses the new answer instead of the
// failure its own database still has. Real `pacer run` processes, each with its own SQLite file
// (a machine), on one real redis-server, against a loopback provider that refuses some prompts.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { query, runOnVendor, tempDir, writeJsonl } from '../../helpers/cli'
import {
  closeVendors,
  fakeVendor,
  vendorDatabase,
  type FakeVendor,
} from '../../helpers/fake-vendor'
import { startRedis, type RedisServer } from '../../helpers/redis'

// A local model server: a refusal takes a moment (and holds capacity), retry after 100 ms.
const LOCAL = { refuseAfterMs: 20, retryAfterMs: 100 }

let server: RedisServer | null = null

afterEach(async () => {
  await closeVendors()
  await server?.close()
  server = null
})

const GOOD = 5
const BAD = 3
const COPIES = 3

/** Each of GOOD + BAD distinct prompts COPIES times, interleaved; `bad-` ones are refused. */
function batchFile(dir: string): string {
  const prompts = [
    ...Array.from({ length: GOOD }, (_, i) => `good-task-${i}`),
    ...Array.from({ length: BAD }, (_, i) => `bad-task-${i}`),
  ]
  const lines = Array.from({ length: COPIES }, () => prompts).flat()
  return writeJsonl(
    dir,
    'retry.jsonl',
    lines.map((prompt) => ({ type: 'classify', payload: { prompt } })),
  )
}

const summaryOf = (stdout: string) => JSON.parse(stdout) as RunSummary

/** Every call the provider got for a prompt, answered or refused. */
const calls = (p: FakeVendor) => {
  const out = new Map(p.answered)
  for (const [prompt, n] of p.refused) out.set(prompt, (out.get(prompt) ?? 0) + n)
  return out
}

/** One machine's `pacer run` of the file; its exit code must be `code`. */
async function run(
  file: string,
  db: string,
  store: string,
  code: number,
  extra: string[] = [],
): Promise<{ summary: RunSummary; stderr: string }> {
  const done = await runOnVendor(file, db, ['--store', store, ...extra]).done
  expect(done.code, done.stderr).toBe(code)
  return { summary: summaryOf(done.stdout), stderr: done.stderr }
}

/** The errors of a machine's failed tasks, distinct. */
const failures = (db: string) =>
  query<{ error: string }>(db, `SELECT DISTINCT error FROM tasks WHERE status = 'failed'`).map(
    (r) => r.error,
  )

/** A provider refusing the `bad-` prompts, a Redis, the batch file, and one database per name. */
async function team(names: string[]) {
  const root = tempDir('pacer-team-retry-')
  const provider = await fakeVendor({ capacity: 8, latencyMs: 20, ...LOCAL })
  provider.refuses = (prompt) => prompt.startsWith('bad-')
  server = await startRedis()
  const dbs = names.map((name) => {
    const dir = join(root, name)
    mkdirSync(dir)
    return vendorDatabase(dir, provider)
  })
  return { provider, store: server.url, file: batchFile(root), dbs }
}

describe('team mode: --retry-failed', () => {
  it('a failure kept as the team’s result is reused everywhere; --retry-failed on one machine runs each failed task once more, and the others reuse the new answer', async () => {
    const { provider, store, file, dbs } = await team(['a', 'b', 'c'])
    const [a, b, c] = dbs as [string, string, string]
    const distinct = GOOD + BAD
    const tasks = distinct * COPIES

    // Machine A runs the batch: the refused prompts fail, their failure kept as the result.
    const first = await run(file, a, store, 1)
    expect(first.summary).toMatchObject({ tasks, distinct, failed: BAD * COPIES })
    expect(first.summary.executed).toBe(GOOD)
    expect(calls(provider).size).toBe(distinct)
    expect([...calls(provider).values()].every((n) => n === 1)).toBe(true)

    // B and C run the same file: they reuse A's answers and A's failures, calling nothing.
    for (const db of [b, c]) {
      const again = await run(file, db, store, 1)
      expect(again.summary).toMatchObject({ tasks, executed: 0, failed: BAD * COPIES })
      expect(failures(db)).toEqual(['same task failed before: HTTP 400: prompt refused'])
    }
    expect([...calls(provider).values()].every((n) => n === 1)).toBe(true)

    // The cause is fixed; B runs with --retry-failed: each failed distinct task runs once more.
    provider.refuses = () => false
    const retried = await run(file, b, store, 0, ['--retry-failed'])
    expect(retried.stderr).toContain(`pacer: retrying ${BAD} task(s) that failed before`)
    expect(retried.summary).toMatchObject({ tasks, failed: 0, executed: BAD })
    for (let i = 0; i < BAD; i++) {
      expect(provider.refused.get(`bad-task-${i}`)).toBe(1)
      expect(provider.answered.get(`bad-task-${i}`)).toBe(1)
    }

    // A (without the flag) and C (with it) reuse B's new answers, not their own old failures.
    const calledBefore = [...calls(provider).values()].reduce((n, k) => n + k, 0)
    const rerunA = await run(file, a, store, 0)
    const rerunC = await run(file, c, store, 0, ['--retry-failed'])
    for (const x of [rerunA, rerunC]) {
      expect(x.summary).toMatchObject({ tasks, failed: 0, executed: 0, reused: tasks })
    }
    expect([...calls(provider).values()].reduce((n, k) => n + k, 0)).toBe(calledBefore)
    // Each distinct task: one answer across the team (the bad ones also their one refusal).
    expect(provider.answered.size).toBe(distinct)
    expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)
    // Every machine's database now holds the answer, no failure, for each distinct task.
    for (const db of [a, b, c]) {
      const stored = query<{ status: string; n: number }>(
        db,
        `SELECT status, COUNT(*) AS n FROM claims WHERE state = 'completed' GROUP BY status`,
      )
      expect(stored).toEqual([{ status: 'succeeded', n: distinct }])
    }
  })

  it('--retry-failed on a machine that never saw the failure: the team’s is run again too, once, and a failure of this run stands', async () => {
    const { provider, store, file, dbs } = await team(['a', 'd'])
    const [a, d] = dbs as [string, string]
    await run(file, a, store, 1)
    // Still refused: D's --retry-failed runs each failed task once more; its copies reuse that.
    const broken = await run(file, d, store, 1, ['--retry-failed'])
    expect(broken.summary).toMatchObject({ failed: BAD * COPIES, executed: 0 })
    for (let i = 0; i < BAD; i++) expect(provider.refused.get(`bad-task-${i}`)).toBe(2)
    // Fixed: once more, answered; A then reuses the answers.
    provider.refuses = () => false
    const fixed = await run(file, d, store, 0, ['--retry-failed'])
    expect(fixed.summary).toMatchObject({ failed: 0, executed: BAD })
    const rerunA = await run(file, a, store, 0)
    expect(rerunA.summary).toMatchObject({ failed: 0, executed: 0 })
    expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)
    expect(provider.answered.size).toBe(GOOD + BAD)
  })
})
