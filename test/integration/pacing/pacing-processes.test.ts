// Three real `pacer run` processes on one database against one loopback provider that speaks the
// OpenAI chat-completions API, has a hidden concurrency capacity and answers 429 beyond it: they
// share one budget, so the provider never sees more calls at once than the shared limit allows,
// and a process killed with SIGKILL gives its slots back: at once when its pid is seen gone, else
// when its lease runs out.
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { prefixedBatch, query, runOnVendor, tempDir, until } from '../../helpers/cli'
import { closeVendors, fakeVendor, vendorDatabase } from '../../helpers/fake-vendor'

// A local model server: a refusal takes a moment (and holds capacity), retry after 100 ms.
const LOCAL = { refuseAfterMs: 20, retryAfterMs: 100 }

afterEach(closeVendors)

const CAPACITY = 5
// The shared limit may rise this far above the capacity before the provider's 429s cut it: the
// provider must never see more. Three processes pacing apart each start at 4 (12 at once) and
// would each go this high.
const MAX = CAPACITY + 2

describe('three pacer run processes on one database share one budget', () => {
  it('the provider never sees more calls at once than the shared limit allows; few are throttled; each task runs once', async () => {
    const dir = tempDir('pacer-shared-')
    const provider = await fakeVendor({ capacity: CAPACITY, latencyMs: 100, ...LOCAL })
    const db = vendorDatabase(dir, provider)
    const procs = ['p1', 'p2', 'p3']
    const runs = procs.map((proc) =>
      runOnVendor(prefixedBatch(dir, proc, 100), db, [
        '--initial-concurrency',
        '4',
        '--max-concurrency',
        String(MAX),
      ]),
    )
    const results = await Promise.all(runs.map((r) => r.done))
    for (const r of results) {
      expect(r.code, r.stderr).toBe(0)
      const summary = JSON.parse(r.stdout) as RunSummary
      expect(summary).toMatchObject({ tasks: 100, executed: 100, failed: 0 })
    }

    console.log(
      JSON.stringify({
        max: provider.maxOpen,
        procs: provider.maxProcessesAtOnce,
        ok: provider.ok,
        thr: provider.throttled,
      }),
    )
    // The processes ran side by side, or the bound below would prove nothing.
    expect(provider.maxProcessesAtOnce).toBeGreaterThanOrEqual(2)
    expect(provider.maxOpen).toBeLessThanOrEqual(MAX)
    // It found the capacity: at some point the provider was full.
    expect(provider.maxOpen).toBeGreaterThanOrEqual(CAPACITY)
    const share = provider.throttled / (provider.ok + provider.throttled)
    // The first burst (three processes at 4 against 5 slots) and the probes: a probe comes 5 round
    // trips after a refusal, doubling to 40, so a capacity that rises is found within seconds; on
    // a 6 s run of 100 ms calls that is a few refused probes more than one every 8 s was.
    expect(share).toBeLessThan(0.06)
    // Every task answered once, no more.
    expect(provider.answered.size).toBe(300)
    expect([...provider.answered.values()].every((n) => n === 1)).toBe(true)

    // One shared record for the partition; every process's outcomes counted on it.
    const partitions = query<{ partition: string }>(db, 'SELECT partition FROM pacing_partitions')
    expect(partitions).toEqual([{ partition: 'openai-compatible:local' }])
    const workers = query<{ successes: number; throttles: number; slots: number }>(
      db,
      'SELECT successes, throttles, slots FROM pacing_workers',
    )
    expect(workers).toHaveLength(3)
    expect(workers.reduce((n, w) => n + w.successes, 0)).toBe(300)
    expect(workers.reduce((n, w) => n + w.throttles, 0)).toBe(provider.throttled)
    expect(workers.every((w) => w.slots === 0)).toBe(true)
  })

  it('a process killed with SIGKILL gives its slots back (at once: its pid is gone): the others reach full concurrency', async () => {
    const dir = tempDir('pacer-shared-kill-')
    const provider = await fakeVendor({ capacity: CAPACITY, latencyMs: 300, ...LOCAL })
    const db = vendorDatabase(dir, provider)
    // The limit is pinned at the capacity, so "full" is a number: 5 slots between the survivors.
    const pinned = [
      '--min-concurrency',
      '5',
      '--max-concurrency',
      '5',
      '--initial-concurrency',
      '5',
    ]
    const lease = ['--lease', '2']
    const runs = ['p1', 'p2', 'p3'].map((proc) =>
      runOnVendor(prefixedBatch(dir, proc, proc === 'p1' ? 400 : 60), db, [...pinned, ...lease]),
    )
    const victim = runs[0]!
    const pid = victim.child.pid as number
    interface Slots {
      worker: string
      slots: number
      lease_until: number
    }
    const slots = () => query<Slots>(db, 'SELECT worker, slots, lease_until FROM pacing_workers')
    const isVictim = (w: Slots) => w.worker.includes(`:${pid}:`)
    // Killed while it holds slots, with the others at work beside it.
    await until(() => {
      const rows = slots()
      return rows.length === 3 && rows.every((w) => w.slots > 0) ? rows : undefined
    })
    victim.child.kill('SIGKILL')
    expect((await victim.done).signal).toBe('SIGKILL')
    const dead = slots().find(isVictim) as Slots
    expect(dead.slots).toBeGreaterThan(0)

    // The survivors hold all 5 slots between them; its slots are still on its row, but their lease
    // is over: the next run's sweep saw its pid gone (workers.ts) and ended it, or it ran out.
    const full = await until(() => {
      const rows = slots()
      const survivors = rows.filter((w) => !isVictim(w)).reduce((n, w) => n + w.slots, 0)
      return survivors === 5 ? rows : undefined
    })
    const after = full.find(isVictim)
    expect(after?.slots).toBe(dead.slots)
    expect(after?.lease_until).toBeLessThanOrEqual(Date.now())

    for (const r of runs.slice(1)) {
      const done = await r.done
      expect(done.code, done.stderr).toBe(0)
      expect(JSON.parse(done.stdout) as RunSummary).toMatchObject({ executed: 60, failed: 0 })
    }
    // Never more than the shared 5, the dead process's calls included.
    expect(provider.maxOpen).toBeLessThanOrEqual(5)
    expect(provider.throttled).toBe(0)
  })
})
