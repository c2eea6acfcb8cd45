// The contenders, each driving the same tasks against the same simulated provider: what most
// people write (p-queue or Bottleneck at a fixed 12 with retries), today's seed controller, an
// oracle told the capacity, and Pacer. Pacer and the seed run the real Scheduler through the same
// classify() the runner uses; nothing of their logic is re-implemented here.
import Bottleneck from 'bottleneck'
import PQueue from 'p-queue'
import { classify, retryAfterMs, retryDelayMs } from '../../src/main/engine/providers/classify'
import { controllerFactory } from '../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../src/main/engine/pacing/scheduler'
import { backoffMs } from '../../src/main/engine/runner/retry'
import { SEED_AIMD, type ProviderResponse } from '../../src/main/engine/core/types'
import type { BenchTask, SimulatedProvider } from './providers'
import { sleep } from './virtual-time'

/** What a contender gets: the tasks, the provider, and `call`, which keeps the books. */
export interface Run {
  tasks: BenchTask[]
  provider: SimulatedProvider
  call(task: BenchTask): Promise<ProviderResponse>
  random: () => number
  /** The budget announced when the batch starts, in scenarios that announce one. */
  budget?: { kind: 'requests' | 'input-tokens'; perMinute: number }
}

export interface Contender {
  name: string
  /** Only where it applies (Bottleneck's reservoir needs a budget to configure). */
  applies?: (budget: Run['budget']) => boolean
  /** Runs every task to success; returns how many times the limit changed. */
  drive(run: Run): Promise<number>
}

const FIXED = 12
const PARTITION = 'bench:model'
/** What the runner picks beyond the scheduler's concurrency (its `prefetch` default). */
const PREFETCH = 2

const throttled = (r: ProviderResponse) => r.status === 429 || r.status === 503 || r.status === 529

/** p-retry's defaults (1 s, doubling), capped at 32 s. */
const pRetryBackoff = (attempt: number) => Math.min(32_000, 1000 * 2 ** (attempt - 1))

/** Retries inside the task, holding its slot, as `queue.add(() => pRetry(call))` does. */
async function withRetry(run: Run, task: BenchTask): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const answer = await run.call(task)
    if (!throttled(answer)) return
    await sleep(retryAfterMs(answer.headers, Date.now()) ?? pRetryBackoff(attempt))
  }
}

const pQueue: Contender = {
  name: 'p-queue 12 + retry',
  async drive(run) {
    const queue = new PQueue({ concurrency: FIXED })
    await Promise.all(run.tasks.map((t) => queue.add(() => withRetry(run, t))))
    return 0
  },
}

class Refused extends Error {
  constructor(readonly waitMs: number | undefined) {
    super('refused')
  }
}

function bottleneck(name: string, reservoir: boolean): Contender {
  return {
    name,
    applies: (budget) => !reservoir || budget !== undefined,
    async drive(run) {
      const budget = run.budget
      // A job's weight counts against maxConcurrent too, so a token reservoir (weight = tokens)
      // runs its calls through a second limiter that holds the concurrency at 12.
      const byTokens = reservoir && budget?.kind === 'input-tokens'
      let options: Bottleneck.ConstructorOptions = { maxConcurrent: byTokens ? null : FIXED }
      if (reservoir && budget) {
        // Configured from the budget announced when the batch started: Bottleneck cannot learn.
        const perSecond = Math.ceil(budget.perMinute / 60)
        options = {
          ...options,
          reservoir: budget.perMinute,
          reservoirIncreaseAmount: perSecond,
          reservoirIncreaseInterval: 1000,
          reservoirIncreaseMaximum: budget.perMinute,
        }
      }
      const limiter = new Bottleneck(options)
      const slots = byTokens ? new Bottleneck({ maxConcurrent: FIXED }) : undefined
      limiter.on('failed', (error, info) =>
        error instanceof Refused ? (error.waitMs ?? pRetryBackoff(info.retryCount + 1)) : undefined,
      )
      const attempt = async (t: BenchTask) => {
        const answer = await run.call(t)
        if (throttled(answer)) throw new Refused(retryAfterMs(answer.headers, Date.now()))
      }
      await Promise.all(
        run.tasks.map((t) =>
          limiter.schedule({ weight: byTokens ? t.estimate.inputTokens : 1 }, () =>
            slots ? slots.schedule(() => attempt(t)) : attempt(t),
          ),
        ),
      )
      await limiter.stop({ dropWaitingJobs: true })
      await slots?.stop({ dropWaitingJobs: true })
      return 0
    },
  }
}

/**
 * Drives the real Scheduler as the runner does: tasks picked up to concurrency + prefetch, one
 * acquire per attempt, classify() on the answer. `paced` is the phase-2 runner: the answer's
 * headers and usage go back with the permit, and a throttled call re-acquires at once because
 * the scheduler's pause, budget and controller decide when it goes; otherwise it sleeps as
 * today's runner does.
 */
export async function viaScheduler(
  run: Run,
  scheduler: Scheduler,
  paced: boolean,
): Promise<number> {
  let changes = 0
  let next = 0
  let active = 0
  let finished = 0
  const attempt = async (task: BenchTask) => {
    for (let throttles = 0; ;) {
      const estimate = paced ? task.estimate : undefined
      const permit = await scheduler.acquire(PARTITION, undefined, estimate)
      const answer = await run.call(task)
      const outcome = classify(answer, scheduler.getParams(PARTITION).nearLimitRemaining)
      permit.release(outcome, paced ? { headers: answer.headers, usage: answer.usage } : undefined)
      if (outcome === 'ok' || outcome === 'near_limit') return
      throttles++
      if (!paced) {
        const wait = retryDelayMs(answer.headers, Date.now()) ?? backoffMs(throttles, run.random)
        await sleep(Math.min(wait, 60_000))
      }
    }
  }
  await new Promise<void>((resolve) => {
    const pump = () => {
      const partition = scheduler.snapshot()[0]
      const concurrency = partition?.concurrency ?? Math.floor(scheduler.getParams('*').initial)
      while (active < concurrency + PREFETCH && next < run.tasks.length) {
        const task = run.tasks[next++] as BenchTask
        active++
        void attempt(task).then(() => {
          active--
          if (++finished === run.tasks.length) resolve()
          else pump()
        })
      }
    }
    scheduler.on('limit', () => {
      changes++
      pump()
    })
    pump()
  })
  scheduler.close()
  return changes
}

const seed: Contender = {
  name: 'seed (Scheduler + SeedAimd)',
  drive: (run) =>
    viaScheduler(
      run,
      // The seed memo's numbers, its ceiling of 12 included: the seed at parity.
      new Scheduler({ createController: controllerFactory('seed'), params: SEED_AIMD }),
      false,
    ),
}

function pacerContender(name: string, pauseOnLoneRefusal: boolean): Contender {
  return {
    name,
    drive: (run) =>
      viaScheduler(
        run,
        new Scheduler({
          createController: controllerFactory('adaptive'),
          pacing: { random: run.random, pauseOnLoneRefusal },
        }),
        true,
      ),
  }
}

const pacer = pacerContender('Pacer (adaptive + budget)', false)
/** The other choice for a lone refusal's retry-after, measured on the same draws. */
export const PACER_PAUSING = pacerContender('Pacer, pausing on a lone refusal', true)

/**
 * Sends the queue's head whenever `delayMs` says the provider would take it, and puts a refused
 * call back at the head. `lagMs` is how late the contender hears what the provider does: it wakes
 * at each change plus the lag, and after a refusal holds its sends for a lag, the time that news
 * takes to reach it (a sooner retry would meet the view that was just refused), unless `slots`:
 * one of its calls answered frees a slot it sees at once.
 */
export async function admitWhenTold(
  run: Run,
  delayMs: (task: BenchTask) => number,
  lagMs: number,
  slots: boolean,
): Promise<number> {
  const queue = [...run.tasks]
  let finished = 0
  let timer: NodeJS.Timeout | undefined
  let heldUntil = -Infinity
  await new Promise<void>((resolve) => {
    const drain = () => {
      clearTimeout(timer)
      timer = undefined
      while (queue.length > 0) {
        const wait = Math.max(heldUntil - Date.now(), delayMs(queue[0] as BenchTask))
        if (wait > 0) {
          if (Number.isFinite(wait)) timer = setTimeout(drain, wait)
          return
        }
        const task = queue.shift() as BenchTask
        void run.call(task).then((answer) => {
          if (throttled(answer)) {
            queue.unshift(task)
            heldUntil = Date.now() + lagMs
          } else {
            if (slots) heldUntil = -Infinity
            if (++finished === run.tasks.length) resolve()
          }
          drain()
        })
      }
    }
    // A capacity that rises admits once it is heard of, not at the next completion.
    for (const at of run.provider.changes) {
      setTimeout(() => {
        heldUntil = -Infinity
        drain()
      }, at + lagMs)
    }
    drain()
  })
  clearTimeout(timer)
  return run.provider.changes.length
}

/** Told the capacity: admits exactly when the provider would accept, never more. */
const oracle: Contender = {
  name: 'oracle (told the capacity)',
  drive: (run) => admitWhenTold(run, (t) => run.provider.oracleDelayMs(t), 0, true),
}

export const CONTENDERS: Contender[] = [
  pQueue,
  bottleneck('Bottleneck 12 + retry', false),
  bottleneck('Bottleneck reservoir + retry', true),
  seed,
  oracle,
  pacer,
]
