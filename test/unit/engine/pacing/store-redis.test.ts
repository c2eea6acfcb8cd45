// The pacing store contract on a real redis-server: two clients on one server are what two
// machines see. Each test's keys live under a prefix of their own.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectTeamStore, type TeamStore } from '../../../../src/main/engine/team/connect'
import { parseStoreUrl } from '../../../../src/main/engine/team/store-url'
import { Scheduler } from '../../../../src/main/engine/pacing/scheduler'
import { FakeClock } from '../../../helpers/clock'
import { startRedis, type RedisServer } from '../../../helpers/redis'
import { until } from '../../../helpers/until'
import { pacingStoreSuite } from './store-suite'

let redis: RedisServer

beforeAll(async () => {
  redis = await startRedis()
})

afterAll(async () => {
  await redis.close()
})

async function teamStore(leaseMs: number, prefix: string): Promise<TeamStore> {
  return connectTeamStore(parseStoreUrl(redis.url, 'test'), { leaseMs, prefix })
}

pacingStoreSuite('Redis (two clients on one server)', async (leaseMs) => {
  const prefix = `t${randomBytes(4).toString('hex')}:`
  const [a, b] = await Promise.all([teamStore(leaseMs, prefix), teamStore(leaseMs, prefix)])
  return {
    a: a.pacing,
    b: b.pacing,
    async close() {
      await Promise.all([a.close(), b.close()])
    },
  }
})

describe('RedisPacingStore', () => {
  it('a server restarted without its data: the worker joins again and admission goes on', async () => {
    const own = await startRedis()
    const store = await connectTeamStore(parseStoreUrl(own.url, 'test'), { leaseMs: 60_000 })
    const statuses: boolean[] = []
    store.onStatus((s) => statuses.push(s.up))
    const init = {
      params: {
        min: 1,
        max: 4,
        initial: 2,
        increase: 0.5,
        decrease: 0.5,
        cooldownMs: 8000,
        nearLimitRemaining: 5,
      },
      controller: { limit: 2, lastCutAt: null, memory: null },
    }
    const p = store.pacing
    const scheduler = new Scheduler({ clock: new FakeClock(), store: p, worker: 's' })
    ;(await scheduler.acquire('q')).release('ok')
    await p.join('p', 'w', init, 1000)
    expect((await p.admit('p', 'w', 1000, 0)).admitted).toBe(true)
    await own.stop()
    // While it is down an admission waits (nothing is admitted without the server's slot).
    let answered = false
    const pending = p.admit('p', 'w', 1001, 0).then((a) => {
      answered = true
      return a
    })
    await until(() => store.down)
    expect(answered).toBe(false)
    expect(store.down?.message).toMatch(/unreachable \(.+\): admission paused until it answers/)
    // The console's partition status says why nothing goes.
    expect(scheduler.view()).toMatchObject([{ partition: 'q', storeOutage: store.down?.message }])
    await own.start()
    const a = await pending
    expect(a).toMatchObject({ admitted: true, inflight: 1 })
    expect(statuses).toEqual([false, true])
    expect(scheduler.view()[0]?.storeOutage).toBeUndefined()
    scheduler.close()
    await store.close()
    await own.close()
  })
})
