// What the engine costs per task: a batch through the whole pipeline (queue pick, claim, scheduler
// admission, provider call, ledger rows, fenced completion, reuse of duplicates) against the same
// provider calls made directly with a plain semaphore, in the same process and run. The simulated
// provider answers on the next timer tick (latencyScale 0) with room for every call, and the AIMD
// limit is pinned, so the ratio measures Pacer's bookkeeping, not the provider or the controller.
//
//   node bin/run-ts.cjs bench/runner.ts [N]   N tasks per round, half of them duplicates (default 4000)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { createEngine } from '../src/main/engine/app/engine'
import { taskMessages } from '../src/main/engine/providers/prompt'
import { createSimProvider } from '../src/main/engine/providers/sim'

const ROUNDS = 3
const CONCURRENCY = 64
const N = Number(process.argv[2] ?? 4000)

const tasks = Array.from({ length: N }, (_, i) => ({
  type: 'bench',
  payload: { prompt: `task ${i % (N / 2)}: summarize the quarterly report in three lines` },
}))

/** The same distinct calls, straight to the provider, CONCURRENCY at a time. */
async function baseline(): Promise<number> {
  const sim = createSimProvider({ latencyScale: 0, capacity: 100_000 })
  const distinct = tasks.slice(0, N / 2)
  const started = performance.now()
  let next = 0
  const worker = async () => {
    while (next < distinct.length) {
      const t = distinct[next++]!
      const answer = await sim.call({
        model: 'sim-small',
        messages: taskMessages(t.type, t.payload),
      })
      if (answer.status !== 200) throw new Error(`baseline call failed: ${answer.status}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return N / ((performance.now() - started) / 1000)
}

/** The whole batch through the engine on a temp database file. */
async function engineRun(): Promise<{ perSecond: number; executed: number; reused: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pacer-bench-runner-'))
  const engine = createEngine({
    dbPath: path.join(dir, 'pacer.db'),
    sim: { latencyScale: 0, capacity: 100_000 },
    scheduler: { min: CONCURRENCY, max: CONCURRENCY, initial: CONCURRENCY },
  })
  try {
    const started = performance.now()
    const { batchId } = await engine.handlers['tasks:enqueue']({ tasks })
    engine.start()
    await new Promise<void>((resolve) => {
      const check = () => {
        const c = engine.queue.counts(batchId)
        if (c.queued + c.running === 0) resolve()
        else setTimeout(check, 50)
      }
      check()
    })
    const perSecond = N / ((performance.now() - started) / 1000)
    const totals = engine.ledger.totals({ batchId })
    return { perSecond, executed: totals.executed, reused: totals.reused }
  } finally {
    await engine.shutdown({ graceMs: 0 })
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(9)

async function main(): Promise<void> {
  const base: number[] = []
  const eng: number[] = []
  let ok = true
  for (let r = 0; r < ROUNDS; r++) {
    base.push(await baseline())
    const run = await engineRun()
    eng.push(run.perSecond)
    // Every distinct task executed once, every duplicate reused: the speed is of the real thing.
    if (run.executed !== N / 2 || run.reused !== N / 2) {
      console.log(`  round ${r + 1}: executed ${run.executed}, reused ${run.reused}: WRONG`)
      ok = false
    }
  }
  const b = median(base)
  const e = median(eng)
  console.log(
    `runner bench: ${N} tasks per round (${N / 2} distinct), ${CONCURRENCY} concurrent, ${ROUNDS} rounds; median tasks/s`,
  )
  console.log(`  baseline: ${N / 2} direct provider calls   ${fmt(b)}   1.00`)
  console.log(`  engine: queue+claim+ledger+reuse     ${fmt(e)}   ${(e / b).toFixed(2)}`)
  console.log(`  per task, the engine adds ${((1 / e - 1 / b) * 1e6).toFixed(0)} µs`)
  if (!ok) process.exitCode = 1
}

void main()
