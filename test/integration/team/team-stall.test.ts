// A team store that keeps the connection and never answers: a loopback server that accepts and
// stays silent, and a real redis-server stopped with SIGSTOP mid-batch. Neither may hang a run in
// silence: the start fails in seconds naming host:port (exit 3), a stall mid-batch is said on
// stderr within seconds and Ctrl-C ends the run; resumed once the server answers, every task is
// executed exactly once.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { prefixedBatch, query, runOnVendor, runPacer, tempDir, until } from '../../helpers/cli'
import { closeVendors, fakeVendor, vendorDatabase } from '../../helpers/fake-vendor'
import { startRedis, type RedisServer } from '../../helpers/redis'
import { silentServer, type SilentServer } from '../../helpers/silent-server'

const PASSWORD = 'stall-s3cret-Pw'
const redisServers: RedisServer[] = []
const silentServers: SilentServer[] = []

afterEach(async () => {
  await closeVendors()
  await Promise.all(redisServers.splice(0).map((r) => r.close()))
  await Promise.all(silentServers.splice(0).map((s) => s.close()))
})

describe('a team store that accepts the connection and never answers', () => {
  it('pacer run --store fails its start within seconds, naming host:port (exit 3), the password never shown', async () => {
    const root = tempDir('pacer-team-silent-')
    const silent = await silentServer()
    silentServers.push(silent)
    const file = prefixedBatch(root, 'p1', 3)
    const started = Date.now()
    const result = await runPacer([
      'run',
      file,
      '--db',
      join(root, 'pacer.db'),
      '--provider',
      'openai-compatible',
      '--model',
      'local',
      '--store',
      `redis://:${PASSWORD}@127.0.0.1:${silent.port}/0`,
    ])
    const tookMs = Date.now() - started
    expect(silent.accepted()).toBeGreaterThan(0)
    expect(result.code, result.stderr).toBe(3)
    expect(tookMs).toBeLessThan(30_000)
    expect(result.stderr.trim()).toMatch(
      new RegExp(`^pacer: team store 127\\.0\\.0\\.1:${silent.port} not answering for \\d+ s`),
    )
    expect(result.stdout + result.stderr).not.toContain(PASSWORD)
  })

  it('redis-server stopped (SIGSTOP) mid-batch: the outage is said within seconds, Ctrl-C ends the run, and the rerun executes every task exactly once', async () => {
    const root = tempDir('pacer-team-sigstop-')
    const provider = await fakeVendor({ capacity: 4, latencyMs: 100 })
    const r = await startRedis({ password: PASSWORD })
    redisServers.push(r)
    const dir = join(root, 'm1')
    mkdirSync(dir)
    const db = vendorDatabase(dir, { baseUrl: provider.baseUrl })
    const file = prefixedBatch(root, 'p1', 80)
    const env = { PACER_REDIS_PASSWORD: PASSWORD }
    const first = runOnVendor(file, db, ['--store', r.url], env)
    try {
      await until(() => provider.ok >= 10, 60_000)
      r.signal('SIGSTOP')
      const stalledAt = Date.now()
      await until(() => first.output().stderr.includes('not answering'), 30_000)
      const saidMs = Date.now() - stalledAt
      first.child.kill('SIGINT')
      const interruptedAt = Date.now()
      // The first Ctrl-C: no new calls; what waits on the store gives up within its deadline.
      const ended = await Promise.race([
        first.done,
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000).unref()),
      ])
      const endedMs = Date.now() - interruptedAt
      if (!ended) first.child.kill('SIGKILL')
      expect(ended, first.output().stderr).not.toBeNull()
      console.log(JSON.stringify({ saidMs, endedMs, code: ended?.code }))
      expect(ended?.code, ended?.stderr).toBe(130)
      expect(ended?.stderr).toMatch(
        /pacer: team store redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0 not answering for \d+ s .*admission paused/,
      )
      expect(ended?.stderr).not.toContain(PASSWORD)
    } finally {
      r.signal('SIGCONT')
    }
    const again = await runOnVendor(file, db, ['--store', r.url], env).done
    expect(again.code, again.stderr).toBe(0)
    // Every task done, and no prompt sent to the provider twice, across both runs.
    expect(provider.answered.size).toBe(80)
    expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)
    const summary = JSON.parse(again.stdout) as RunSummary
    expect(summary).toMatchObject({ tasks: 80, failed: 0 })
    const executed = query<{ n: number }>(
      db,
      `SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed'`,
    )[0]?.n
    expect(executed).toBe(80)
  })
})
