// `npm run bench:overhead`: admissions per second through the Scheduler against a provider that
// answers at once, so the figure is the scheduler's own cost per call (acquire, release,
// controller, and with pacing: header parsing and the rate budget). The scheduler must never be
// the bottleneck: the target is 50,000 admissions/s in one process, and 5,000/s with the budget
// shared through the SQLite file (every admission and release a write every process sees). Team
// mode's budget in Redis (a real redis-server on loopback, started here) is measured beside it:
// each admission and release a Lua script, a release two round trips (its decision is made on
// the record it is written to).
//
//   node bin/run-ts.cjs bench/scheduler-overhead.ts [N]   N admissions per round (default 200000;
//                                                         a tenth of it for the shared budget)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { classify } from '../src/main/engine/providers/classify'
import { openDatabase } from '../src/main/engine/db'
import { controllerFactory } from '../src/main/engine/pacing/controllers'
import { SqlitePacingStore } from '../src/main/engine/pacing/store-sqlite'
import { connectTeamStore } from '../src/main/engine/team/connect'
import { parseStoreUrl } from '../src/main/engine/team/store-url'
import { startRedis, type RedisServer } from '../test/helpers/redis'
import type { SchedulerOptions } from '../src/main/engine/pacing/scheduler'
import { Scheduler } from '../src/main/engine/pacing/scheduler'

const N = Number(process.argv[2] ?? 200_000)
const WORKERS = 64
// Fewer slots than callers, as in a batch with more tasks than the provider takes at once: some
// calls always wait, so admission, FIFO hand-over and release are all measured.
const SLOTS = 48
const ROUNDS = 3

// A budget far above what the run uses: the headers are read and the budget kept, never waited on.
const HEADERS: Record<string, string> = {
  'x-ratelimit-limit-requests': '1000000000',
  'x-ratelimit-remaining-requests': '999999999',
  'x-ratelimit-reset-requests': '1ms',
  'x-ratelimit-limit-tokens': '1000000000000',
  'x-ratelimit-remaining-tokens': '999999999999',
  'x-ratelimit-reset-tokens': '1ms',
}
const ANSWER = { status: 200, headers: HEADERS }
const USAGE = { inputTokens: 100, outputTokens: 20 }
const ESTIMATE = { inputTokens: 100, outputTokens: 20 }

const pinned = { min: SLOTS, max: SLOTS, initial: SLOTS }

interface Setup {
  options: SchedulerOptions
  done: () => void | Promise<void>
}

interface Config {
  name: string
  /** Fresh options for each round, and what to clean up after it. */
  setup: () => Setup | Promise<Setup>
  paced: boolean
  n: number
  target: number
}

const inProcess = (options: SchedulerOptions) => () => ({ options, done: () => {} })

/**
 * A scheduler on a SqlitePacingStore in a fresh database file. `lean`: the engine's default, a
 * process alone leasing the partition in blocks (store-sqlite-lean.ts); off, every admission and
 * release is a write every process sees, as when several share the partition.
 */
function shared(options: SchedulerOptions, lean = false) {
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'pacer-bench-'))
    const db = openDatabase(join(dir, 'pacer.db'))
    return {
      options: { ...options, store: new SqlitePacingStore({ db, lean }) },
      done: () => {
        db.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
}

let redis: RedisServer | undefined

/** A scheduler on a RedisPacingStore, on a redis-server started for the bench. */
function teamShared(options: SchedulerOptions) {
  return async (): Promise<Setup> => {
    redis ??= await startRedis()
    const team = await connectTeamStore(parseStoreUrl(redis.url, 'bench'), {
      prefix: `bench${Math.random().toString(36).slice(2)}:`,
    })
    return { options: { ...options, store: team.pacing }, done: () => team.close() }
  }
}

const adaptivePaced: SchedulerOptions = {
  params: pinned,
  createController: controllerFactory('adaptive'),
  pacing: true,
}

const CONFIGS: Config[] = [
  {
    name: 'seed controller, no pacing',
    setup: inProcess({ params: pinned }),
    paced: false,
    n: N,
    target: 50_000,
  },
  {
    name: 'adaptive + pacing (headers read)',
    setup: inProcess(adaptivePaced),
    paced: true,
    n: N,
    target: 50_000,
  },
  {
    name: 'shared SQLite budget, adaptive + pacing',
    setup: shared(adaptivePaced),
    paced: true,
    n: Math.ceil(N / 10),
    target: 5_000,
  },
  {
    name: 'shared SQLite budget, alone: leased in blocks',
    setup: shared(adaptivePaced, true),
    paced: true,
    n: Math.ceil(N / 10),
    target: 5_000,
  },
  {
    name: 'shared Redis budget (team mode), adaptive + pacing',
    setup: teamShared(adaptivePaced),
    paced: true,
    n: Math.ceil(N / 20),
    // Round trips to a server: a shared budget is still far above what a provider takes (a
    // 5-call partition at 1 s a call is 5 admissions/s).
    target: 1_000,
  },
]

async function round({ setup, paced, n }: Config): Promise<number> {
  const { options, done } = await setup()
  const scheduler = new Scheduler(options)
  const perWorker = Math.ceil(n / WORKERS)
  const worker = async () => {
    for (let i = 0; i < perWorker; i++) {
      const permit = await scheduler.acquire('bench:model', undefined, paced ? ESTIMATE : undefined)
      // The provider answers at once: one turn of the microtask queue.
      const answer = await Promise.resolve(ANSWER)
      const outcome = classify(answer, 0)
      permit.release(outcome, paced ? { headers: answer.headers, usage: USAGE } : undefined)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: WORKERS }, worker))
  const elapsed = performance.now() - started
  scheduler.close()
  await done()
  return (perWorker * WORKERS) / (elapsed / 1000)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

async function main(): Promise<void> {
  console.log(
    `scheduler overhead: ${WORKERS} callers on ${SLOTS} slots, ${ROUNDS} rounds; median admissions/s`,
  )
  let ok = true
  for (const config of CONFIGS) {
    const rates: number[] = []
    for (let r = 0; r < ROUNDS; r++) rates.push(await round(config))
    const rate = median(rates)
    const verdict = rate >= config.target ? 'ok' : `BELOW TARGET ${config.target}`
    console.log(
      `  ${config.name.padEnd(50)} ${Math.round(rate).toLocaleString('en-US').padStart(10)}  ` +
        `(${config.n} per round, target ${config.target.toLocaleString('en-US')})  ${verdict}`,
    )
    if (rate < config.target) ok = false
  }
  await redis?.close()
  if (!ok) process.exitCode = 1
}

void main()
