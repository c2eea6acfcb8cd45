// What a team cap costs per provider call (issue 21, team mode): the team store's three scripts on
// a real redis-server on loopback (reserve, sent mark, settlement), 64 calls in flight as a run
// has them, with no team cap (the reserve that answers none applies) and under three team caps
// (day, task type, model).
//
//   node bin/run-ts.cjs bench/team-caps.ts [CALLS]   (default 5000)
import { performance } from 'node:perf_hooks'
import { createClient, defineScript } from '@redis/client'
import { TeamCaps } from '../src/main/engine/pacing/team-caps'
import type { RedisLink } from '../src/main/engine/redis/script-runner'
import { clientScripts } from '../src/main/engine/team/scripts'
import { startRedis } from '../test/helpers/redis'

const CALLS = Number(process.argv[2] ?? 5000)
const IN_FLIGHT = 64
const CALL = { batchId: 'b1', taskType: 'classify', provider: 'openai', model: 'gpt-4o-mini' }
const ALL = { taskType: null, provider: null, model: null, period: 'total', zone: 'UTC' } as const

async function main(): Promise<void> {
  const redis = await startRedis()
  const client = createClient({
    socket: { host: '127.0.0.1', port: redis.port },
    scripts: clientScripts(defineScript),
  })
  await client.connect()
  try {
    for (const kind of ['none', 'three caps'] as const) {
      const caps = new TeamCaps({ client: client as unknown as RedisLink, prefix: `${kind}:` })
      if (kind !== 'none') {
        await caps.set({ ...ALL, period: 'day' }, 1e12, 0)
        await caps.set({ ...ALL, taskType: 'classify' }, 1e12, 0)
        await caps.set({ ...ALL, provider: 'openai', model: 'gpt-4o-mini' }, 1e12, 0)
      }
      let next = 0
      const start = performance.now()
      // IN_FLIGHT workers, each a call after the other: reserve, mark sent, settle.
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next++ < CALLS) {
            const r = await caps.reserve(CALL, 100)
            if (r.kind === 'reserved') {
              await caps.markSent(r.id)
              caps.settle(CALL, r.id, 90)
            } else if (r.kind !== 'uncapped') throw new Error(`unexpected ${r.kind}`)
          }
        }),
      )
      await caps.settled()
      const ms = performance.now() - start
      caps.stop()
      console.log(
        `${kind.padEnd(10)} ${((ms * 1000) / CALLS).toFixed(0).padStart(5)} µs a call (wall, ${IN_FLIGHT} in flight), ${Math.round((CALLS / ms) * 1000)} calls/s`,
      )
    }
  } finally {
    await client.close()
    await redis.close()
  }
}

void main()
