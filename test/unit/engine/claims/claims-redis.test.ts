// The claim store contract on a real redis-server: two connections on one server are what two
// machines see. Each test's keys live under a prefix of their own. Then what only a networked
// store does: pub/sub across connections, an outage, a restart without persistence.
import { createHash, randomBytes } from 'node:crypto'
import { createClient, defineScript } from '@redis/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  RedisClaimStore,
  type ClaimSeed,
} from '../../../../src/main/engine/claims/redis/claims-redis'
import type { RedisLink } from '../../../../src/main/engine/pacing/store-redis'
import { clientScripts } from '../../../../src/main/engine/team/scripts'
import { CLAIM } from '../../../../src/main/engine/claims/redis/scripts'
import { fingerprint } from '../../../../src/main/engine/core/fingerprint'
import { FakeClock } from '../../../helpers/clock'
import { startRedis, type RedisServer } from '../../../helpers/redis'
import { until } from '../../../helpers/until'
import { claimStoreSuite, type ClaimStoreOptions } from './claims-suite'

let redis: RedisServer

beforeAll(async () => {
  redis = await startRedis()
})

afterAll(async () => {
  await redis.close()
})

async function connection(port = redis.port) {
  const client = createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: () => 50 },
    disableOfflineQueue: true,
    scripts: clientScripts(defineScript),
  })
  client.on('error', () => {})
  await client.connect()
  const sub = client.duplicate()
  sub.on('error', () => {})
  await sub.connect()
  return { client, sub }
}

function storeOn(
  c: Connection,
  prefix: string,
  opts: ClaimStoreOptions & { reseedGraceMs?: number; onStatus?: (m: string) => void },
) {
  return new RedisClaimStore({
    client: c.client as unknown as RedisLink,
    subscriber: c.sub,
    prefix,
    reseedGraceMs: 0,
    ...opts,
  })
}

type Connection = Awaited<ReturnType<typeof connection>>

async function closeAll(...cs: Connection[]) {
  for (const c of cs) {
    for (const x of [c.client, c.sub]) {
      if (x.isReady) await x.close()
      else x.destroy()
    }
  }
}

claimStoreSuite('Redis (two connections on one server)', async () => {
  const prefix = `t${randomBytes(4).toString('hex')}:`
  const [a, b] = await Promise.all([connection(), connection()])
  return {
    store: (opts) => storeOn(a, prefix, opts),
    elsewhere: (opts) => storeOn(b, prefix, opts),
    async row(fp) {
      const h = await a.client.hGetAll(`${prefix}claim:${fp}`)
      if (h.state === undefined) return undefined
      return {
        state: h.state,
        status: h.status ?? null,
        owner: h.owner ?? '',
        epoch: Number(h.epoch),
        lease_until: Number(h.lease),
        result: h.result ?? null,
      }
    },
    count: async () => (await a.client.keys(`${prefix}claim:*`)).length,
    close: () => closeAll(a, b),
  }
})

const FP = fingerprint('summarize', { text: 'hello' })
const LEASE = 10_000

describe('RedisClaimStore', () => {
  it("a waiter is woken by another machine's completion through pub/sub, not by polling", async () => {
    const prefix = `w${randomBytes(4).toString('hex')}:`
    const [a, b] = await Promise.all([connection(), connection()])
    const clock = new FakeClock()
    const slow = { clock, pollMinMs: 60_000, pollMaxMs: 60_000 }
    const here = storeOn(a, prefix, slow)
    const there = storeOn(b, prefix, slow)
    await Promise.all([here.start(), there.start()])
    await there.claim(FP, 'A', LEASE)
    // The waiters whose first look the server has answered (each look names its waiter): after
    // it, with a minute between polls, only the pub/sub message can wake them in time.
    const looked = new Set<string>()
    const link = a.client as unknown as RedisLink
    const send = link.sendCommand.bind(link)
    link.sendCommand = async (args) => {
      const reply = await send(args)
      for (const arg of args) if (/^W\d+$/.test(arg)) looked.add(arg)
      return reply
    }
    const waiters = Array.from({ length: 20 }, (_, i) =>
      here.wait(FP, `W${i}`, { timeoutMs: 5_000, leaseMs: LEASE }),
    )
    await until(() => looked.size === 20)
    void there.complete(FP, 1, '"far"', 'succeeded', 7)
    const outcomes = await Promise.all(waiters)
    expect(outcomes.every((o) => o.kind === 'completed')).toBe(true)
    here.stop()
    there.stop()
    await closeAll(a, b)
  })

  it('while the server is out of reach a claim waits for it, and a completion is held until it answers', async () => {
    // Persisted: a server back with its data, not a restart without it.
    const own = await startRedis({ persist: true })
    const c = await connection(own.port)
    const prefix = 'o:'
    const s = storeOn(c, prefix, { clock: new FakeClock() })
    await s.start()
    expect(await s.claim(FP, 'A', LEASE)).toMatchObject({ kind: 'owned', epoch: 1 })
    let refused = 0
    c.client.on('error', () => refused++)
    await own.stop()
    let claimed = false
    const other = s.claim(fingerprint('other', {}), 'A', LEASE).then((a) => {
      claimed = true
      return a
    })
    let completed: boolean | undefined
    const done = s.complete(FP, 1, '"paid"', 'succeeded').then((d) => (completed = d))
    expect(await s.renewMany([{ fp: FP, epoch: 1 }], LEASE)).toBeNull()
    // The client has lost the server and been refused again on reconnecting: both still held.
    await until(() => refused >= 2)
    expect(claimed).toBe(false)
    expect(completed).toBeUndefined()
    await own.start()
    expect(await done).toBe(true)
    expect(await other).toMatchObject({ kind: 'owned' })
    expect(await s.getResult(FP)).toMatchObject({ result: '"paid"' })
    s.stop()
    await closeAll(c)
    await own.close()
  })

  it('a server restarted without its data is found and re-seeded before anyone claims again', async () => {
    const own = await startRedis()
    const [a, b] = await Promise.all([connection(own.port), connection(own.port)])
    const clock = new FakeClock()
    const said: string[] = []
    const opts = { clock, reseedGraceMs: 500, checkEveryMs: 50, display: 'R' }
    const first = storeOn(a, 'r:', { ...opts, onStatus: (m) => said.push(`a ${m}`) })
    const second = storeOn(b, 'r:', { ...opts, onStatus: (m) => said.push(`b ${m}`) })
    const done = fingerprint('done', {})
    const running = fingerprint('running', {})
    const seeds: ClaimSeed[] = [
      {
        fp: done,
        owner: 'A',
        epoch: 1,
        status: 'succeeded',
        result: '"kept"',
        costMicros: 5,
        completedAt: clock.t,
      },
      // Past retention: not written back.
      {
        fp: fingerprint('old', {}),
        owner: 'A',
        epoch: 1,
        status: 'succeeded',
        result: '"old"',
        costMicros: 5,
        completedAt: clock.t - 90_000_000,
      },
    ]
    first.seedFrom(() => seeds)
    await first.start()
    await second.start()
    // The first machine on an empty server seeds what its database knows.
    expect(said).toEqual([
      "a team store R holds no claims yet: seeding 1 completed tasks from this machine's database",
      'a team store R: 1 claims written back; claims resume',
    ])
    said.length = 0
    // Nobody claims in the grace after a seed began (time is the callers').
    clock.advance(500)
    expect(await second.claim(running, 'B', LEASE)).toMatchObject({ kind: 'owned', epoch: 1 })
    await own.stop()
    await own.start()
    await until(() => said.length >= 4)
    clock.advance(500)
    expect(said.sort()).toEqual(
      [
        "a team store R restarted empty: re-seeding 1 completed tasks from this machine's database",
        'a team store R: 1 claims written back; claims resume',
        "b team store R restarted empty: re-seeding 0 completed tasks from this machine's database and its 1 running claims",
        'b team store R: 1 claims written back; claims resume',
      ].sort(),
    )
    // What both knew is back: the result for everyone, the running claim still B's.
    expect(await first.claim(done, 'C', LEASE)).toMatchObject({ kind: 'completed' })
    expect(await first.claim(running, 'C', LEASE)).toMatchObject({ kind: 'busy', owner: 'B' })
    expect(await second.complete(running, 1, '"b"', 'succeeded')).toBe(true)
    first.stop()
    second.stop()
    await closeAll(a, b)
    await own.close()
  })

  it('a server that forgot the scripts (SCRIPT FLUSH) is sent their source again', async () => {
    const c = await connection()
    const s = storeOn(c, `f${randomBytes(4).toString('hex')}:`, { clock: new FakeClock() })
    await s.start()
    expect(await s.claim(FP, 'A', LEASE)).toMatchObject({ kind: 'owned', epoch: 1 })
    const sha = createHash('sha1').update(CLAIM.source).digest('hex')
    expect(await c.client.scriptExists(sha)).toEqual([1])
    await c.client.scriptFlush()
    expect(await s.claim(fingerprint('next', {}), 'A', LEASE)).toMatchObject({ kind: 'owned' })
    expect(await c.client.scriptExists(sha)).toEqual([1])
    s.stop()
    await closeAll(c)
  })

  it('a client created without the team scripts is refused by name, not with a Redis error', async () => {
    const client = createClient({ socket: { host: '127.0.0.1', port: redis.port } })
    await client.connect()
    const s = new RedisClaimStore({ client: client as unknown as RedisLink, prefix: 'n:' })
    await expect(s.start()).rejects.toThrow(/no script method claims\w+: create it with/)
    s.stop()
    await client.close()
  })
})
