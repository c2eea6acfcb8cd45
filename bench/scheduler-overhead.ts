// `npm run bench:overhead`: admissions per second through the in-process Scheduler against a
// provider that answers at once, so the figure is the scheduler's own cost per call (acquire,
// release, controller, and with pacing: header parsing and the rate budget). The scheduler must
// never be the bottleneck: the target is 50,000 admissions/s.
//
//   node bin/run-ts.cjs bench/scheduler-overhead.ts [N]   N admissions per round (default 200000)
import { performance } from 'node:perf_hooks'
import { classify } from '../src/main/engine/classify'
import { controllerFactory } from '../src/main/engine/pacing/controllers'
import type { SchedulerOptions } from '../src/main/engine/scheduler'
import { Scheduler } from '../src/main/engine/scheduler'

const N = Number(process.argv[2] ?? 200_000)
const WORKERS = 64
const ROUNDS = 3
const TARGET = 50_000

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

const pinned = { min: WORKERS, max: WORKERS, initial: WORKERS }

const CONFIGS: { name: string; options: SchedulerOptions; paced: boolean }[] = [
  { name: 'seed controller, no pacing', options: { params: pinned }, paced: false },
  {
    name: 'adaptive + pacing (headers read)',
    options: {
      params: pinned,
      createController: controllerFactory('adaptive'),
      pacing: true,
    },
    paced: true,
  },
]

async function round(options: SchedulerOptions, paced: boolean): Promise<number> {
  const scheduler = new Scheduler(options)
  const perWorker = Math.ceil(N / WORKERS)
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
  return (perWorker * WORKERS) / (elapsed / 1000)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

async function main(): Promise<void> {
  console.log(
    `scheduler overhead: ${N} admissions per round, ${WORKERS} concurrent, ${ROUNDS} rounds; median admissions/s`,
  )
  let ok = true
  for (const { name, options, paced } of CONFIGS) {
    const rates: number[] = []
    for (let r = 0; r < ROUNDS; r++) rates.push(await round(options, paced))
    const rate = median(rates)
    const verdict = rate >= TARGET ? 'ok' : `BELOW TARGET ${TARGET}`
    console.log(
      `  ${name.padEnd(34)} ${Math.round(rate).toLocaleString('en-US').padStart(10)}  ${verdict}`,
    )
    if (rate < TARGET) ok = false
  }
  if (!ok) process.exitCode = 1
}

void main()
