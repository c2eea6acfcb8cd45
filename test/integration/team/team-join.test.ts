// `pacer serve --store` started while the team's Redis is down: a real redis-server started
// later, a real `pacer run` as another machine, one loopback provider counting each prompt's
// calls. The console serves alone meanwhile, does not switch in the middle of a batch, joins the
// team when the batch ends (no restart), and from then on reuses what the team completed.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { BatchSummary, SettingsView, TeamStoreView } from '../../../src/shared/contract'
import { serveConsole } from '../../helpers/browser'
import { query, runOnVendor, tempDir, until, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, vendorDatabase } from '../../helpers/fake-vendor'
import { startRedis, type RedisServer } from '../../helpers/redis'

// A local model server: a refusal takes a moment (and holds capacity), retry after 100 ms.
const LOCAL = { refuseAfterMs: 20, retryAfterMs: 100 }

let redis: RedisServer | undefined
afterEach(async () => {
  await closeVendors()
  await redis?.close()
  redis = undefined
})

const tasks = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    type: 'classify',
    payload: { prompt: `${prefix}-${i}` },
    provider: 'openai-compatible',
    model: 'local',
  }))

function machine(root: string, name: string, providerUrl: string): string {
  const dir = join(root, name)
  mkdirSync(dir)
  return vendorDatabase(dir, { baseUrl: providerUrl })
}

describe('a console whose team store did not answer at its start', () => {
  it('serves alone, joins when Redis answers and its batch has ended, then reuses what the team ran', async () => {
    const root = tempDir('pacer-team-join-')
    // Two calls at once, a second each: the console's first batch runs for several seconds.
    const provider = await fakeVendor({ capacity: 2, latencyMs: 1000, ...LOCAL })
    redis = await startRedis()
    await redis.stop()
    const consoleDb = machine(root, 'console', provider.baseUrl)
    const otherDb = machine(root, 'other', provider.baseUrl)
    const served = await serveConsole(consoleDb, ['--store', redis.url])
    const { api, proc } = served
    const teamStore = async () => (await api<SettingsView>('settings:get')).teamStore
    const batch = async (id: string) =>
      (await api<BatchSummary[]>('batches:list')).find((b) => b.id === id)
    try {
      expect(await teamStore()).toMatchObject({
        active: null,
        problem: expect.stringMatching(
          /unreachable.*on this machine alone .*joins the team when the store answers/,
        ) as unknown,
      })
      // A batch alone, still running when the store comes back: the process does not switch.
      const alone = await api<{ batchId: string }>('tasks:enqueue', { tasks: tasks('alone', 20) })
      await until(async () => ((await batch(alone.batchId))?.counts.succeeded ?? 0) > 0, 30_000)
      await redis.start()
      const asked = await api<TeamStoreView>('team:join')
      expect((await batch(alone.batchId))?.state).toBe('running')
      expect(asked).toMatchObject({
        active: null,
        problem: expect.stringMatching(
          /answers again; this process joins the team when the running batch ends/,
        ) as unknown,
      })
      // It joins when the batch ends, by itself.
      await until(async () => (await batch(alone.batchId))?.state === 'done', 60_000)
      await until(async () => (await teamStore()).active === redis?.url || undefined, 30_000)
      expect(await teamStore()).toEqual({ stored: null, active: redis.url, problem: null })

      // Another machine runs three tasks through the team; the console's next batch has them and
      // two of its own: the three are reused from the team, not sent again.
      const file = writeJsonl(join(root, 'other'), 'shared.jsonl', tasks('shared', 3))
      const other = await runOnVendor(file, otherDb, ['--store', redis.url]).done
      expect(other.code, other.stderr).toBe(0)
      const mixed = [...tasks('shared', 3), ...tasks('fresh', 2)]
      const joined = await api<{ batchId: string }>('tasks:enqueue', { tasks: mixed })
      await until(async () => (await batch(joined.batchId))?.state === 'done', 60_000)
      expect((await batch(joined.batchId))?.counts).toMatchObject({ succeeded: 2, reused: 3 })
      expect(provider.answered.size).toBe(20 + 3 + 2)
      expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)
      const outcomes = query<{ outcome: string; n: number }>(
        consoleDb,
        `SELECT outcome, COUNT(*) AS n FROM ledger WHERE outcome IN ('executed', 'reused')
         GROUP BY outcome ORDER BY outcome`,
      )
      expect(outcomes).toEqual([
        { outcome: 'executed', n: 22 },
        { outcome: 'reused', n: 3 },
      ])
    } finally {
      proc.child.kill('SIGINT')
    }
    const done = await proc.done
    expect(done.code, done.stderr).toBe(0)
    // One line when it started alone, one when it joined: nothing per attempt.
    const lines = done.stderr.split('\n').filter((l) => /team (store|mode)/.test(l))
    expect(lines).toEqual([
      expect.stringMatching(/^pacer: team store 127\.0\.0\.1:\d+ unreachable: .*joins the team/),
      expect.stringMatching(/^pacer: team store redis:\/\/127\.0\.0\.1:\d+\/0 answers: team mode/),
    ])
  }, 180_000)
})
