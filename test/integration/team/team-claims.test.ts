// Team mode's claims: three real `pacer run` processes, each with its own SQLite file (three
// machines), on one real redis-server, run the same batch file with duplicates against one
// loopback provider that counts each prompt's calls. Each distinct task is executed once across
// the three; a machine killed mid-batch leaves its claims to expire and the others finish; a
// Redis restarted without its data is re-seeded from the machines' databases before anyone
// claims again.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '@redis/client'
import type { RunSummary } from '../../../src/main/cli/run'
import { query, runOnVendor, tempDir, until, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, vendorDatabase } from '../../helpers/fake-vendor'
import { startRedis, type RedisServer } from '../../helpers/redis'

// A local model server: a refusal takes a moment (and holds capacity), retry after 100 ms.
const LOCAL = { refuseAfterMs: 20, retryAfterMs: 100 }

const redisServers: RedisServer[] = []

afterEach(async () => {
  await closeVendors()
  await Promise.all(redisServers.splice(0).map((r) => r.close()))
})

async function redis(): Promise<RedisServer> {
  const r = await startRedis()
  redisServers.push(r)
  return r
}

/** `lines` tasks over `distinct` prompts, in an order of their own for each machine. */
function sharedBatch(dir: string, lines: number, distinct: number): string {
  const tasks = Array.from({ length: lines }, (_, i) => ({
    type: 'classify',
    payload: { prompt: `shared-task-${(i * 7) % distinct}` },
  }))
  return writeJsonl(dir, 'shared.jsonl', tasks)
}

function machine(root: string, name: string, providerUrl: string): string {
  const dir = join(root, name)
  mkdirSync(dir)
  return vendorDatabase(dir, { baseUrl: providerUrl })
}

function run(file: string, db: string, store: string, extra: string[] = []) {
  return runOnVendor(file, db, ['--store', store, '--initial-concurrency', '4', ...extra])
}

/** The team's claims on the server: fingerprint → state and owner. */
async function teamClaims(r: RedisServer): Promise<{ state: string; owner: string }[]> {
  const client = createClient({ socket: { port: r.port, host: '127.0.0.1' } })
  await client.connect()
  try {
    const keys = await client.keys('pacer:claim:*')
    const out = []
    for (const k of keys) {
      const h = await client.hGetAll(k)
      out.push({ state: h.state ?? '', owner: h.owner ?? '' })
    }
    return out
  } finally {
    await client.close()
  }
}

const summaryOf = (stdout: string) => JSON.parse(stdout) as RunSummary

describe('team mode: claims shared through Redis', () => {
  it('three machines, one batch with duplicates: each distinct task is executed once across them', async () => {
    const root = tempDir('pacer-team-claims-')
    // Room for the shared limit's most (12), though a CI run once saw a refused call.
    const provider = await fakeVendor({ capacity: 16, latencyMs: 100, ...LOCAL })
    const r = await redis()
    const file = sharedBatch(root, 120, 40)
    const names = ['m1', 'm2', 'm3']
    const dbs = names.map((n) => machine(root, n, provider.baseUrl))
    const results = await Promise.all(dbs.map((db) => run(file, db, r.url).done))
    const summaries = results.map((x) => {
      expect(x.code, x.stderr).toBe(0)
      expect(x.stderr).toContain('the provider budget and the claims are shared through')
      return summaryOf(x.stdout)
    })
    console.log(JSON.stringify(summaries.map(({ executed, reused }) => ({ executed, reused }))))
    // The provider saw each distinct prompt once, whoever sent it.
    expect(provider.answered.size).toBe(40)
    expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)
    expect(summaries.reduce((n, s) => n + s.executed, 0)).toBe(40)
    for (const [i, s] of summaries.entries()) {
      // Every machine's batch is done, with what the others ran as reuses of its own.
      expect(s).toMatchObject({ tasks: 120, distinct: 40, failed: 0, duplicates: 0 })
      expect(s.executed + s.reused).toBe(120)
      // Its database points every task at a result of its own, and its ledger says the same.
      const db = dbs[i] as string
      const [tasks] = query<{ done: number; withResult: number }>(
        db,
        `SELECT COUNT(*) AS done, COUNT(result) AS withResult FROM tasks
         WHERE status IN ('succeeded', 'reused')`,
      )
      expect(tasks).toEqual({ done: 120, withResult: 120 })
      const rows = query<{ outcome: string; n: number }>(
        db,
        `SELECT outcome, COUNT(*) AS n FROM ledger GROUP BY outcome ORDER BY outcome`,
      )
      // A refused call is on the ledger as throttled (retried, not executed): the executions and
      // reuses are what the claims decide.
      const outcomes = Object.fromEntries(rows.map((x) => [x.outcome, x.n]))
      delete outcomes['throttled']
      expect(outcomes).toEqual(
        s.executed === 0 ? { reused: 120 } : { executed: s.executed, reused: s.reused },
      )
    }
    // The team's store holds one completed claim per distinct task.
    const claims = await teamClaims(r)
    expect(claims.length).toBe(40)
    expect(claims.every((c) => c.state === 'completed')).toBe(true)
  })
  it('a machine killed with SIGKILL: its team claims expire and the others finish; at most its calls in flight run again', async () => {
    const root = tempDir('pacer-team-claims-kill-')
    const provider = await fakeVendor({ capacity: 6, latencyMs: 300, ...LOCAL })
    const r = await redis()
    const file = sharedBatch(root, 150, 60)
    const dbs = ['m1', 'm2', 'm3'].map((n) => machine(root, n, provider.baseUrl))
    const runs = dbs.map((db) => run(file, db, r.url, ['--lease', '2']))
    const victim = runs[0]!
    const mark = `:${victim.child.pid as number}:`
    const heldBy = async () =>
      (await teamClaims(r)).filter((c) => c.state === 'running' && c.owner.includes(mark)).length
    // Killed while it holds claims of its own, calls in flight.
    await until(async () => provider.ok >= 6 && (await heldBy()) > 0, 60_000)
    victim.child.kill('SIGKILL')
    expect((await victim.done).signal).toBe('SIGKILL')
    // What it held as it died: only these may run again (their leases expire in 2 s).
    const held = await heldBy()
    for (const x of runs.slice(1)) {
      const done = await x.done
      expect(done.code, done.stderr).toBe(0)
      const s = summaryOf(done.stdout)
      expect(s).toMatchObject({ tasks: 150, distinct: 60, failed: 0 })
      expect(s.executed + s.reused).toBe(150)
    }
    // Every distinct task answered; repeated only where the dead machine's call was in flight
    // (answered to a closed socket, its claim left to expire).
    expect(provider.answered.size).toBe(60)
    const repeated = [...provider.answered.values()].reduce((n, k) => n + k - 1, 0)
    expect(repeated).toBeLessThanOrEqual(held)
    // The killed machine run again finds the batch done elsewhere: nothing new is sent.
    const before = provider.ok
    const again = await run(file, dbs[0] as string, r.url).done
    expect(again.code, again.stderr).toBe(0)
    expect(summaryOf(again.stdout)).toMatchObject({ tasks: 150, failed: 0 })
    expect(provider.ok).toBe(before)
    // Each call it paid before dying is on its ledger: executed, or a duplicate whose answer was
    // lost when another machine completed the task.
    const paid = query<{ payload: string; outcome: string; reason: string | null }>(
      dbs[0] as string,
      `SELECT DISTINCT t.payload, l.outcome, l.reason FROM ledger l JOIN tasks t ON t.fp = l.fp
       WHERE l.outcome IN ('executed', 'duplicate')`,
    )
    const ledgered = new Set(paid.map((p) => (JSON.parse(p.payload) as { prompt: string }).prompt))
    const twice = [...provider.answered].filter(([, k]) => k > 1).map(([prompt]) => prompt)
    const lost = paid.filter((p) => p.outcome === 'duplicate').length
    console.log(JSON.stringify({ held, repeated, lostAnswersLedgered: lost }))
    expect(twice.filter((p) => !ledgered.has(p))).toEqual([])
    expect(
      paid.filter((p) => p.outcome === 'duplicate').every((p) => p.reason === 'answer lost'),
    ).toBe(true)
  })
  it('Redis stopped until the calls in flight have landed, and restarted without its data: the machines re-seed it, the batch completes with no task run twice', async () => {
    const root = tempDir('pacer-team-claims-restart-')
    const provider = await fakeVendor({ capacity: 6, latencyMs: 150, ...LOCAL })
    const r = await redis()
    const file = sharedBatch(root, 150, 60)
    const dbs = ['m1', 'm2', 'm3'].map((n) => machine(root, n, provider.baseUrl))
    const runs = dbs.map((db) => run(file, db, r.url))
    await until(() => provider.ok >= 15, 60_000)
    await r.stop()
    await until(() => runs.every((x) => x.output().stderr.includes('admission paused')))
    // Every call out at the stop has been answered: its completion waits on the missing server.
    await until(() => provider.open === 0, 60_000)
    await r.start()
    const results = await Promise.all(runs.map((x) => x.done))
    const reseeded = results.filter((x) =>
      /team store redis:\/\/127\.0\.0\.1:\d+\/0 restarted empty: re-seeding \d+ completed tasks from this machine's database/.test(
        x.stderr,
      ),
    )
    for (const x of results) {
      expect(x.code, x.stderr).toBe(0)
      const s = summaryOf(x.stdout)
      expect(s).toMatchObject({ tasks: 150, distinct: 60, failed: 0, duplicates: 0 })
      expect(s.executed + s.reused).toBe(150)
    }
    console.log(
      JSON.stringify({
        reseeded: reseeded.length,
        executed: results.map((x) => summaryOf(x.stdout).executed),
        lines: reseeded.map((x) => x.stderr.match(/.*restarted empty.*/)?.[0]),
      }),
    )
    // Every machine had completed tasks when the server went: each wrote them back.
    expect(reseeded.length).toBe(3)
    // Zero duplicates: each distinct prompt answered once, across the outage and the restart.
    expect(provider.answered.size).toBe(60)
    expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)
  })
})
