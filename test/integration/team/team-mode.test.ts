// Team mode: three real `pacer run` processes, each with its own SQLite file (three machines),
// share one provider budget through one real redis-server, against one loopback provider with a
// hidden capacity. The provider never sees more calls at once than the shared limit; a process
// killed with SIGKILL gives its slots back when its lease expires; a Redis that goes away for
// seconds pauses admission (no call goes out meanwhile) and the run completes once it is back.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '@redis/client'
import type { RunSummary } from '../../../src/main/cli/run'
import { prefixedBatch, runOnVendor, runPacer, tempDir, until } from '../../helpers/cli'
import { closeVendors, fakeVendor, vendorDatabase } from '../../helpers/fake-vendor'
import { freePort, startRedis, type RedisServer } from '../../helpers/redis'

// A local model server: a refusal takes a moment (and holds capacity), retry after 100 ms.
const LOCAL = { refuseAfterMs: 20, retryAfterMs: 100 }

const redisServers: RedisServer[] = []

afterEach(async () => {
  await closeVendors()
  await Promise.all(redisServers.splice(0).map((r) => r.close()))
})

const PASSWORD = 'team-s3cret-Pw'
const PARTITION_WORKERS = 'pacer:pacing:openai-compatible:local:w'

async function redis(): Promise<RedisServer> {
  const r = await startRedis({ password: PASSWORD })
  redisServers.push(r)
  return r
}

/** Every worker's slots in the partition, as the server holds them: worker id → slots, lease. */
async function slotsIn(r: RedisServer): Promise<Map<string, { slots: number; lease: number }>> {
  const client = createClient({ socket: { port: r.port, host: '127.0.0.1' }, password: PASSWORD })
  await client.connect()
  try {
    const all = await client.hGetAll(PARTITION_WORKERS)
    const out = new Map<string, { slots: number; lease: number }>()
    for (const [worker, value] of Object.entries(all)) {
      const [slots, , lease] = value.split(' ').map(Number)
      out.set(worker, { slots: slots ?? 0, lease: lease ?? 0 })
    }
    return out
  } finally {
    await client.close()
  }
}

/** A machine: its own folder and database, the loopback provider set in its Settings. */
function machine(root: string, name: string, providerUrl: string): string {
  const dir = join(root, name)
  mkdirSync(dir)
  return vendorDatabase(dir, { baseUrl: providerUrl })
}

function run(file: string, db: string, store: string, extra: string[] = [], env = {}) {
  return runOnVendor(file, db, ['--store', store, ...extra], env)
}

const CAPACITY = 5
const MAX = CAPACITY + 2

describe('team mode: three machines share one provider budget through Redis', () => {
  it('the provider never sees more calls at once than the shared limit; each machine runs its tasks once', async () => {
    const root = tempDir('pacer-team-')
    const provider = await fakeVendor({ capacity: CAPACITY, latencyMs: 100, ...LOCAL })
    const r = await redis()
    const procs = ['p1', 'p2', 'p3']
    // The password from the environment for two machines, in the URL for the third.
    const withPassword = `redis://:${PASSWORD}@127.0.0.1:${r.port}/0`
    const runs = procs.map((proc, i) =>
      run(
        prefixedBatch(root, proc, 100),
        machine(root, proc, provider.baseUrl),
        i === 2 ? withPassword : r.url,
        ['--initial-concurrency', '4', '--max-concurrency', String(MAX)],
        i === 2 ? {} : { PACER_REDIS_PASSWORD: PASSWORD },
      ),
    )
    const results = await Promise.all(runs.map((x) => x.done))
    for (const [i, result] of results.entries()) {
      expect(result.code, result.stderr).toBe(0)
      expect(JSON.parse(result.stdout) as RunSummary).toMatchObject({
        tasks: 100,
        executed: 100,
        failed: 0,
      })
      expect(result.stderr).toContain('the provider budget and the claims are shared through')
      // The password shows nowhere: not in what it printed, not in its database.
      expect(result.stdout + result.stderr).not.toContain(PASSWORD)
      if (i === 2) expect(result.stderr).toContain(`redis://:***@127.0.0.1:${r.port}/0`)
      const db = join(root, procs[i] as string, 'pacer.db')
      expect(readFileSync(db).includes(PASSWORD)).toBe(false)
    }
    console.log(
      JSON.stringify({
        max: provider.maxOpen,
        procs: provider.maxProcessesAtOnce,
        ok: provider.ok,
        thr: provider.throttled,
      }),
    )
    expect(provider.maxProcessesAtOnce).toBeGreaterThanOrEqual(2)
    expect(provider.maxOpen).toBeLessThanOrEqual(MAX)
    expect(provider.maxOpen).toBeGreaterThanOrEqual(CAPACITY)
    // The first burst and the probes, 5 round trips after a refusal doubling to 40: on a short run
    // of fast calls a few refused probes more than one every 8 s was (as pacing-processes.test.ts).
    expect(provider.throttled / (provider.ok + provider.throttled)).toBeLessThan(0.06)
    expect(provider.answered.size).toBe(300)
    expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)
    // One shared partition, the three machines on it, every slot given back.
    const workers = await slotsIn(r)
    expect(workers.size).toBe(3)
    expect([...workers.values()].every((w) => w.slots === 0)).toBe(true)
  })

  it('a machine killed with SIGKILL gives its slots back after its lease: the others reach the full limit', async () => {
    const root = tempDir('pacer-team-kill-')
    const provider = await fakeVendor({ capacity: CAPACITY, latencyMs: 300, ...LOCAL })
    const r = await redis()
    const pinned = [
      '--min-concurrency',
      '5',
      '--max-concurrency',
      '5',
      '--initial-concurrency',
      '5',
    ]
    const env = { PACER_REDIS_PASSWORD: PASSWORD }
    const runs = ['p1', 'p2', 'p3'].map((proc) =>
      run(
        // The survivors' batches last long enough that all three are at work at once, however
        // slowly a busy machine starts them.
        prefixedBatch(root, proc, proc === 'p1' ? 400 : 150),
        machine(root, proc, provider.baseUrl),
        r.url,
        [...pinned, '--lease', '2'],
        env,
      ),
    )
    const victim = runs[0]!
    const mark = `:${victim.child.pid as number}:`
    const isVictim = (worker: string) => worker.includes(mark)
    await until(async () => {
      const w = await slotsIn(r)
      return w.size === 3 && [...w.values()].every((x) => x.slots > 0)
    }, 60_000)
    victim.child.kill('SIGKILL')
    expect((await victim.done).signal).toBe('SIGKILL')
    const dead = [...(await slotsIn(r))].find(([w]) => isVictim(w))?.[1]
    expect(dead?.slots).toBeGreaterThan(0)
    // After its lease the survivors hold all 5 between them; its slots are still on its entry.
    const full = await until(async () => {
      const w = await slotsIn(r)
      const survivors = [...w].filter(([id]) => !isVictim(id)).reduce((n, [, x]) => n + x.slots, 0)
      return survivors === 5 ? w : undefined
    })
    expect(Date.now()).toBeGreaterThanOrEqual(dead?.lease ?? 0)
    expect([...full].find(([w]) => isVictim(w))?.[1].slots).toBe(dead?.slots)
    for (const x of runs.slice(1)) {
      const done = await x.done
      expect(done.code, done.stderr).toBe(0)
      expect(JSON.parse(done.stdout) as RunSummary).toMatchObject({ executed: 150, failed: 0 })
    }
    expect(provider.maxOpen).toBeLessThanOrEqual(5)
    expect(provider.throttled).toBe(0)
  })

  it('Redis stopped for seconds mid-run: admission pauses with a visible status, no call goes out, the run completes', async () => {
    const root = tempDir('pacer-team-outage-')
    const provider = await fakeVendor({ capacity: CAPACITY, latencyMs: 100, ...LOCAL })
    const r = await redis()
    const env = { PACER_REDIS_PASSWORD: PASSWORD }
    const runs = ['p1', 'p2'].map((proc) =>
      run(prefixedBatch(root, proc, 150), machine(root, proc, provider.baseUrl), r.url, [], env),
    )
    await until(() => provider.ok >= 20)
    // Without persistence: the server comes back empty, and the machines join it again.
    await r.stop()
    const downAt = Date.now()
    await until(() => runs.every((x) => x.output().stderr.includes('admission paused')))
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const upAt = Date.now()
    await r.start()
    const results = await Promise.all(runs.map((x) => x.done))
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0)
      expect(JSON.parse(result.stdout) as RunSummary).toMatchObject({ executed: 150, failed: 0 })
      expect(result.stderr).toMatch(/team store redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0 unreachable/)
      expect(result.stderr).toContain('answers again: admission resumed')
    }
    // Calls admitted before the stop may still arrive in its first moment; none after that.
    const during = provider.requests.map((q) => q.at).filter((t) => t > downAt + 1000 && t < upAt)
    expect(during).toEqual([])
    expect(provider.requests.map((q) => q.at).filter((t) => t >= upAt).length).toBeGreaterThan(0)
    expect(provider.maxOpen).toBeLessThanOrEqual(12)
  })
})

describe('team mode: what a wrong --store says at start', () => {
  it('a bad URL is a usage error naming the part (2); a server not there or a wrong password names host:port and the cause (3)', async () => {
    const root = tempDir('pacer-team-start-')
    const file = prefixedBatch(root, 'p1', 2)
    const db = join(root, 'pacer.db')
    const start = (store: string, env = {}) =>
      runPacer(['run', file, '--db', db, '--store', store], env)
    const bad = await start('redis://u:hunter2@127.0.0.1:99999/0')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--store: port "99999" is not 1-65535/)
    expect(bad.stderr).not.toContain('hunter2')
    const port = await freePort()
    const absent = await start(`redis://127.0.0.1:${port}/0`)
    expect(absent.code).toBe(3)
    expect(absent.stderr.trim()).toMatch(
      new RegExp(`^pacer: team store 127\\.0\\.0\\.1:${port} unreachable: .*ECONNREFUSED`),
    )
    const r = await redis()
    const refused = await start(r.url, { PACER_REDIS_PASSWORD: 'not-the-password' })
    expect(refused.code).toBe(3)
    expect(refused.stderr).toMatch(/refused the login: WRONGPASS.*check the password/)
    expect(refused.stderr).not.toContain('not-the-password')
    const fromEnv = await runPacer(['run', file, '--db', db], {
      PACER_STORE: `redis://127.0.0.1:${port}`,
    })
    expect(fromEnv.code).toBe(3)
  })
})
