// The team's spend caps on a real redis-server: three TeamCaps on three connections are three
// machines. The reservation scripts keep spent + in doubt + reserved ≤ cap for every cap and
// period whatever the interleaving (a property test with concurrent admissions, settlements,
// failures, deaths and raised caps), a dead owner's reservations come back with its lease (its
// sent ones as in doubt, until their answer is settled), and a retried script never counts twice.
import { randomBytes } from 'node:crypto'
import { createClient, defineScript } from '@redis/client'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TeamCaps } from '../../../../src/main/engine/pacing/team-caps'
import type { RedisLink } from '../../../../src/main/engine/pacing/store-redis'
import { clientScripts } from '../../../../src/main/engine/team/scripts'
import type { CapScope } from '../../../../src/main/engine/pacing/spend-caps'
import { FakeClock } from '../../../helpers/clock'
import { startRedis, type RedisServer } from '../../../helpers/redis'

let redis: RedisServer
const clients: { isReady: boolean; close(): Promise<unknown> }[] = []

beforeAll(async () => {
  redis = await startRedis()
})

afterAll(async () => {
  for (const c of clients) if (c.isReady) await c.close()
  await redis.close()
})

async function connection() {
  const client = createClient({
    socket: { host: '127.0.0.1', port: redis.port },
    disableOfflineQueue: true,
    scripts: clientScripts(defineScript),
  })
  client.on('error', () => {})
  await client.connect()
  clients.push(client)
  return client
}

const DAILY: CapScope = { taskType: null, provider: null, model: null, period: 'day', zone: 'UTC' }
const CALL = { batchId: 'b', taskType: 't', provider: 'openai', model: 'gpt-4o-mini' }
const LEASE = 1000

async function machines(n: number, clock: FakeClock) {
  const prefix = `t${randomBytes(4).toString('hex')}:`
  const conns = await Promise.all(Array.from({ length: n }, () => connection()))
  const caps = conns.map(
    (c, i) =>
      new TeamCaps({
        client: c as unknown as RedisLink,
        prefix,
        leaseMs: LEASE,
        clock,
        owner: `m${i}`,
      }),
  )
  return { prefix, caps, raw: conns[0]! }
}

/** Every cap period's spent, doubt and held, as the store holds them. */
async function periods(raw: Awaited<ReturnType<typeof connection>>, prefix: string) {
  const keys = await raw.keys(`${prefix}caps:spend:*`)
  const out: { key: string; spent: number; doubt: number; held: number; n: number }[] = []
  for (const key of keys) {
    const h = await raw.hGetAll(key)
    out.push({
      key,
      spent: Number(h.spent ?? 0),
      doubt: Number(h.doubt ?? 0),
      held: Number(h.held ?? 0),
      n: Number(h.n ?? 0),
    })
  }
  return out
}

describe('TeamCaps on a real redis-server', () => {
  it('reserves, waits while others hold the rest, stops when the spend alone leaves too little, settles', async () => {
    const clock = new FakeClock()
    const { caps } = await machines(2, clock)
    const [a, b] = caps as [TeamCaps, TeamCaps]
    expect(await a.reserve(CALL, 100)).toEqual({ kind: 'uncapped' })
    const id = await a.set(DAILY, 1000, 0)
    expect(id).toBe(1)
    const r1 = await a.reserve(CALL, 600)
    expect(r1.kind).toBe('reserved')
    // The other machine sees the cap and the hold.
    expect(await b.reserve(CALL, 600)).toEqual({ kind: 'wait' })
    expect(await a.markSent((r1 as { id: string }).id)).toBe(true)
    a.settle(CALL, (r1 as { id: string }).id, 450)
    await a.settled()
    const r2 = await b.reserve(CALL, 500)
    expect(r2.kind).toBe('reserved')
    b.release((r2 as { id: string }).id)
    await b.settled()
    const stop = await b.reserve(CALL, 600)
    expect(stop.kind).toBe('stop')
    expect((stop as { reason: string }).reason).toMatch(
      /^held by budget: the team's daily cap \(UTC\) on all spend is \$0\.0010 for \d{4}-\d\d-\d\d, \$0\.0005 spent across the team/,
    )
    const [view] = await b.views()
    expect(view).toMatchObject({
      id: 1,
      capMicros: 1000,
      spentMicros: 450,
      inDoubtMicros: 0,
      reservedMicros: 0,
      leftMicros: 550,
      percent: 45,
      warnedPercent: 100,
    })
    // A cap of the same scope changes its amount; its spend is the team's, kept.
    expect(await b.set(DAILY, 2000, 0)).toBe(1)
    expect((await a.views())[0]).toMatchObject({ capMicros: 2000, spentMicros: 450 })
    // The unpriced are refused under a cap, not counted as $0.
    expect(await a.reserve(CALL, null)).toEqual({ kind: 'unpriced' })
    expect(await a.remove(1)).toBe(true)
    expect(await a.remove(1)).toBe(false)
    expect(await a.views()).toEqual([])
  })

  it("gives a dead owner's unsent reservations back with its lease, keeps its sent ones in doubt, and a late answer settles the doubt", async () => {
    const clock = new FakeClock()
    const { caps } = await machines(2, clock)
    const [dead, alive] = caps as [TeamCaps, TeamCaps]
    await alive.set(DAILY, 10_000, 0)
    const sent = (await dead.reserve(CALL, 3000)) as { id: string }
    const unsent = (await dead.reserve(CALL, 2000)) as { id: string }
    await dead.markSent(sent.id)
    dead.stop()
    expect((await alive.views())[0]).toMatchObject({ reservedMicros: 5000, inDoubtMicros: 0 })
    clock.advance(LEASE + 1)
    expect((await alive.views())[0]).toMatchObject({
      reservedMicros: 0,
      inDoubtMicros: 3000,
      leftMicros: 7000,
    })
    // Taken for dead, it must not send what it reserved.
    expect(await dead.markSent(unsent.id)).toBe(false)
    // Its answer, settled late (a stalled process), replaces the doubt with the real cost, once.
    dead.settle(CALL, sent.id, 1200)
    dead.settle(CALL, sent.id, 1200)
    await dead.settled()
    expect((await alive.views())[0]).toMatchObject({
      spentMicros: 1200,
      inDoubtMicros: 0,
      reservedMicros: 0,
    })
  })

  it('says each warning threshold once across the team', async () => {
    const clock = new FakeClock()
    const { caps } = await machines(2, clock)
    const [a, b] = caps as [TeamCaps, TeamCaps]
    await a.set(DAILY, 1000, 0)
    const heard: number[] = []
    for (const m of [a, b]) m.onAlert((x) => heard.push(x.percent))
    for (const [m, cost] of [
      [a, 400],
      [b, 150],
      [a, 300],
    ] as const) {
      const r = (await m.reserve(CALL, cost)) as { id: string }
      m.settle(CALL, r.id, cost)
      await m.settled()
    }
    expect(heard).toEqual([50, 80])
  })

  it('property: spent + in doubt + reserved ≤ cap at every step, concurrent machines; after settling reserved = 0 and spent = what was settled', async () => {
    type Op =
      | { op: 'reserve'; m: number; micros: number }
      | { op: 'settle'; pick: number; share: number }
      | { op: 'fail'; pick: number }
      | { op: 'die'; m: number }
      | { op: 'raise'; by: number }
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          op: fc.constant('reserve' as const),
          m: fc.integer({ min: 0, max: 2 }),
          micros: fc.integer({ min: 1, max: 4000 }),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          op: fc.constant('settle' as const),
          pick: fc.nat(),
          share: fc.double({ min: 0, max: 1, noNaN: true }),
        }),
      },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('fail' as const), pick: fc.nat() }) },
      {
        weight: 1,
        arbitrary: fc.record({
          op: fc.constant('die' as const),
          m: fc.integer({ min: 0, max: 2 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          op: fc.constant('raise' as const),
          by: fc.integer({ min: 0, max: 3000 }),
        }),
      },
    )
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 20_000 }),
        fc.array(fc.array(opArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 25 }),
        async (start, rounds) => {
          const clock = new FakeClock()
          const { prefix, caps, raw } = await machines(3, clock)
          let cap = start
          const scopes: CapScope[] = [DAILY, { ...DAILY, period: 'total', taskType: 't' }]
          for (const s of scopes) await caps[0]!.set(s, cap, 0)
          // Each machine's owner changes when it "dies": a new process, a new lease.
          const owners = caps.map(() => 0)
          let live = [...caps]
          const held: { m: number; id: string; micros: number; owner: TeamCaps }[] = []
          const isLive = (h: { m: number; owner: TeamCaps }) => h.owner === live[h.m]
          let settled = 0
          for (const round of rounds) {
            // Each round's operations run concurrently, as machines do.
            await Promise.all(
              round.map(async (o) => {
                if (o.op === 'reserve') {
                  const owner = live[o.m]!
                  const r = await owner.reserve(CALL, o.micros)
                  if (r.kind !== 'reserved') return
                  // An odd size is given back unsent (a stop before the request went out).
                  if (o.micros % 2 === 1) {
                    owner.release(r.id)
                    await owner.settled()
                  } else if (await owner.markSent(r.id)) {
                    held.push({ m: o.m, id: r.id, micros: o.micros, owner })
                  }
                } else if (o.op === 'settle' || o.op === 'fail') {
                  const mine = held.filter(isLive)
                  if (mine.length === 0) return
                  const h = mine[o.pick % mine.length]!
                  held.splice(held.indexOf(h), 1)
                  // A failure is settled at its row's cost: nothing.
                  const cost = o.op === 'fail' ? 0 : Math.floor(h.micros * o.share)
                  h.owner.settle(CALL, h.id, cost)
                  settled += cost
                  await h.owner.settled()
                } else if (o.op === 'die') {
                  live[o.m]!.stop()
                  owners[o.m]!++
                  live = live.map((c, i) =>
                    i === o.m
                      ? new TeamCaps({
                          client: raw as unknown as RedisLink,
                          prefix,
                          leaseMs: LEASE,
                          clock,
                          owner: `m${i}.${owners[i]}`,
                        })
                      : c,
                  )
                  // Its lease runs out (the others' too: a stalled machine is taken for dead
                  // as well, its sent calls in doubt until they settle).
                  clock.advance(LEASE + 1)
                  await live[(o.m + 1) % 3]!.views()
                } else {
                  cap += o.by
                  for (const s of scopes) await caps[0]!.set(s, cap, 0)
                }
              }),
            )
            for (const p of await periods(raw, prefix)) {
              expect(p.spent + p.doubt + p.held).toBeLessThanOrEqual(cap)
              expect(p.held).toBeGreaterThanOrEqual(0)
            }
          }
          // The live settle what they hold at its worst case; the dead ones' leases run out.
          const dead = held.filter((h) => !isLive(h))
          for (const h of held.filter(isLive)) {
            h.owner.settle(CALL, h.id, h.micros)
            settled += h.micros
            await h.owner.settled()
          }
          clock.advance(LEASE + 1)
          const views = await live[0]!.views()
          expect(views).toHaveLength(2)
          for (const v of views) {
            expect(v.reservedMicros).toBe(0)
            expect(v.spentMicros).toBe(settled)
            // What the dead had sent stays counted: it may have been billed.
            expect(v.inDoubtMicros).toBe(dead.reduce((sum, h) => sum + h.micros, 0))
            expect(v.spentMicros + v.inDoubtMicros).toBeLessThanOrEqual(cap)
          }
          for (const p of await periods(raw, prefix)) expect(p.n).toBe(0)
          for (const c of [...caps, ...live]) c.stop()
        },
      ),
      { numRuns: 40 },
    )
  }, 120_000)
})
