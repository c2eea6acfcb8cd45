// The header-announced rate budget shared between real `pacer run` processes: two processes on one
// SQLite database, and two with their own databases on one real redis-server, against one loopback
// provider with a requests-per-minute bucket it announces in x-ratelimit-* headers and enforces
// with 429s. Each process alone would pace to the remainder the provider announces and spend it as
// if it were its own; sharing it, together they spend it once, and the provider refuses (almost)
// nothing.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { prefixedBatch, startPacer, tempDir } from '../../helpers/cli'
import {
  closeVendors,
  fakeVendor,
  vendorDatabase,
  type FakeVendor,
} from '../../helpers/fake-vendor'
import { startRedis, type RedisServer } from '../../helpers/redis'

const redisServers: RedisServer[] = []
afterEach(async () => {
  await closeVendors()
  await Promise.all(redisServers.splice(0).map((r) => r.close()))
})

const TASKS = 30
/** 5 requests a second, none left at the start: the budget, not the concurrency, sets the pace. */
const provider = () => fakeVendor({ rpm: 300, initialRemaining: 0, latencyMs: 40, jitter: 0.2 })

/** Two `pacer run` processes at once, each with its own batch; both must finish every task. */
async function runBoth(dbs: [string, string], root: string, extra: string[] = []) {
  const runs = (['p1', 'p2'] as const).map((proc, i) =>
    startPacer([
      'run',
      prefixedBatch(root, proc, TASKS),
      '--db',
      dbs[i] as string,
      '--provider',
      'openai-compatible',
      '--model',
      'm',
      '--json',
      ...extra,
    ]),
  )
  for (const result of await Promise.all(runs.map((r) => r.done))) {
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout) as RunSummary).toMatchObject({
      tasks: TASKS,
      executed: TASKS,
      failed: 0,
    })
  }
}

/** What the provider saw: every task answered once, and how many calls it refused. */
function refusals(server: FakeVendor): number {
  const { accepted, refused } = server.totals()
  expect(accepted).toBe(2 * TASKS)
  expect([...server.answered.values()].every((n) => n === 1)).toBe(true)
  console.log(JSON.stringify({ accepted, refused }))
  return refused
}

describe('the announced rate budget is spent once by every process that shares it', () => {
  it('two processes on one database: the provider refuses (almost) nothing', async () => {
    const server = await provider()
    const root = tempDir('pacer-shared-budget-')
    const db = vendorDatabase(root, server)
    await runBoth([db, db], root)
    // Before the budget was shared, each process spent the remainder as its own: 23 refusals in
    // this run. What is left happens once, when the opening burst empties the bucket: a call
    // admitted before another but arriving after it is in neither the reading nor the count
    // since (1 to 4 seen).
    expect(refusals(server)).toBeLessThanOrEqual(6)
  }, 120_000)

  it('two machines (own databases) on one Redis: the provider refuses (almost) nothing', async () => {
    const server = await provider()
    const redis = await startRedis()
    redisServers.push(redis)
    const root = tempDir('pacer-shared-budget-')
    const dbs = (['m1', 'm2'] as const).map((m) => {
      mkdirSync(join(root, m))
      return vendorDatabase(join(root, m), server)
    }) as [string, string]
    await runBoth(dbs, root, ['--store', redis.url])
    // Before: 14 refusals in this run, the budget being each machine's own.
    expect(refusals(server)).toBeLessThanOrEqual(6)
  }, 120_000)
})
