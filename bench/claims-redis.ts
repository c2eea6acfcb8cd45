// Team mode's claims: claim+complete throughput of the Redis claim store (a real redis-server on
// loopback, started here) beside the SQLite store's, measured in the same process and run.
// Rounds alternate the two and the median is reported, so that load from other programs hits
// both alike. Redis is measured one claim at a time (each awaits its round trip, as one task
// does) and with many tasks at once (what a runner with dozens of tasks in flight sends: node-redis
// pipelines them on one connection). Then three connections (three machines) race on overlapping
// keys, checking that no fingerprint was completed twice.
//
//   node bin/run-ts.cjs bench/claims-redis.ts [N]   N fingerprints per round and phase (default 5000)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { SqliteClaimStore } from '../src/main/engine/claims/claims'
import type { RedisClaimStore } from '../src/main/engine/claims/redis/claims-redis'
import { openDatabase } from '../src/main/engine/db'
import { fingerprint } from '../src/main/engine/core/fingerprint'
import { connectTeamStore, type TeamStore } from '../src/main/engine/team/connect'
import { parseStoreUrl } from '../src/main/engine/team/store-url'
import type { AsyncClaimStore } from '../src/main/engine/core/types'
import { startRedis } from '../test/helpers/redis'

const ROUNDS = 3
const LEASE_MS = 60_000
const IN_FLIGHT = 32

const fp = (i: number): string => fingerprint('bench', { i })
const range = (from: number, to: number): string[] =>
  Array.from({ length: to - from }, (_, i) => fp(from + i))

interface Phase {
  ms: number
  owned: string[]
  reused: number
}

/** Claims each key and completes what it owns, `inFlight` keys at a time. */
async function claims(
  store: AsyncClaimStore,
  keys: string[],
  worker: string,
  inFlight: number,
): Promise<Phase> {
  const owned: string[] = []
  let reused = 0
  let next = 0
  const one = async (key: string) => {
    const attempt = await store.claim(key, worker, LEASE_MS)
    if (attempt.kind === 'owned') {
      if (await store.complete(key, attempt.epoch, '{"ok":true}', 'succeeded')) owned.push(key)
    } else if (attempt.kind === 'completed') {
      reused++
    }
  }
  const lane = async () => {
    while (next < keys.length) await one(keys[next++] as string)
  }
  const t0 = performance.now()
  await Promise.all(Array.from({ length: inFlight }, lane))
  return { ms: performance.now() - t0, owned, reused }
}

const perSecond = (ops: number, ms: number): number => Math.round((ops * 1000) / ms)
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

function row(label: string, rates: number[], base: number): string {
  const m = median(rates)
  const spread = `${Math.min(...rates).toLocaleString('en-US')}–${Math.max(...rates).toLocaleString('en-US')}`
  return `  ${label.padEnd(44)}${m.toLocaleString('en-US').padStart(9)}   ${(m / base).toFixed(2).padStart(5)}   (${spread})`
}

async function main(n: number): Promise<boolean> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-bench-claims-redis-'))
  const redis = await startRedis()
  const teams: TeamStore[] = []
  const team = async (prefix: string) => {
    const t = await connectTeamStore(parseStoreUrl(redis.url, 'bench'), {
      prefix,
      reseedGraceMs: 0,
    })
    teams.push(t)
    return t.claims
  }
  let ok = true
  try {
    console.log(
      `redis claims bench: ${n.toLocaleString('en-US')} fingerprints per phase, ${ROUNDS} rounds, ` +
        'redis-server on loopback beside SQLite (WAL + synchronous=NORMAL); median (min–max)',
    )
    const db = openDatabase(path.join(dir, 'claims.db'))
    const sqlite = new SqliteClaimStore({ db })
    const remote: RedisClaimStore = await team('b:')
    await claims(sqlite, range(-2000, 0), 'warm', 1) // JIT and page cache, not measured
    await claims(remote, range(-2000, 0), 'warm', IN_FLIGHT)
    const rates: Record<string, number[]> = { sqlite: [], one: [], many: [], hits: [] }
    for (let r = 0; r < ROUNDS; r++) {
      const keys = (tag: number) => range((r * 4 + tag) * n, (r * 4 + tag + 1) * n)
      const s = await claims(sqlite, keys(0), 'w', 1)
      const o = await claims(remote, keys(1), 'w', 1)
      const m = await claims(remote, keys(2), 'w', IN_FLIGHT)
      const h = await claims(remote, keys(2), 'w2', IN_FLIGHT)
      if (s.owned.length !== n || o.owned.length !== n || m.owned.length !== n || h.reused !== n) {
        console.log(
          `  ERROR round ${r}: owned ${s.owned.length}/${o.owned.length}/${m.owned.length}`,
        )
        ok = false
      }
      rates.sqlite!.push(perSecond(n, s.ms))
      rates.one!.push(perSecond(n, o.ms))
      rates.many!.push(perSecond(n, m.ms))
      rates.hits!.push(perSecond(n, h.ms))
    }
    db.close()
    const base = median(rates.sqlite!)
    console.log('\none process                                        ops/s   ratio')
    console.log(row('SQLite claim+complete (baseline)', rates.sqlite!, base))
    console.log(row('Redis claim+complete, one at a time', rates.one!, base))
    console.log(row(`Redis claim+complete, ${IN_FLIGHT} tasks at once`, rates.many!, base))
    console.log(row(`Redis claim of a completed fp, ${IN_FLIGHT} at once`, rates.hits!, base))

    // Three machines (connections) on overlapping halves of the keys.
    const machines = [await team('m:'), await team('m:'), await team('m:')]
    const from = 100 * n
    const windows = machines.map((_, i) =>
      range(from + Math.floor((i * n) / 4), from + Math.floor((i * n) / 4) + n / 2),
    )
    const wanted = new Set(windows.flat())
    const t0 = performance.now()
    const phases = await Promise.all(
      machines.map((m, i) => claims(m, windows[i] as string[], `m${i}`, IN_FLIGHT)),
    )
    const wallMs = performance.now() - t0
    const owned = phases.flatMap((p) => p.owned)
    const duplicates = owned.length - new Set(owned).size
    const good = duplicates === 0 && owned.length === wanted.size
    if (!good) ok = false
    const attempts = windows.reduce((s, w) => s + w.length, 0)
    console.log(
      `\n3 machines, overlapping keys: ${perSecond(attempts, wallMs).toLocaleString('en-US')} claim attempts/s, ` +
        `${owned.length} owned of ${wanted.size} keys (${phases.map((p) => p.owned.length).join('/')}), ` +
        `${phases.reduce((s, p) => s + p.reused, 0)} reused; duplicate completions ${duplicates}: ${good ? 'OK' : 'ERROR'}`,
    )
  } finally {
    for (const t of teams) await t.close()
    await redis.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return ok
}

main(Number(process.argv[2] ?? 5000)).then(
  (ok) => {
    if (!ok) process.exitCode = 1
  },
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
