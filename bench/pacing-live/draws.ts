// The family's draws made short enough to run in real time: the schedule's offsets (and the
// tenant's) scaled so the whole schedule lasts a few seconds, after a warm-up of seconds. Limits,
// refusals, headers and latencies stay as drawn; only time is compressed, so a phase of 2 s drawn
// may last a fraction of a round trip here, in the live run and in its virtual-time twin alike.
import type { BenchTask, Phase } from '../scheduler/providers'
import type { ProviderDraw } from '../scheduler/family'

/**
 * What a drawn task counts for against a token budget, as Pacer paces it: its estimate, the input
 * (mean ~1,270 of family.ts's 200-4,000 log-uniform) and the answer's cap of 600 (bench legs pass
 * --max-tokens 600, as the virtual contender's estimate has it), not the ~1,300 it really spends.
 */
const MEAN_TASK_ESTIMATE = 1870
/** Few enough tasks that one `pacer` process on a 2-core machine is not what limits the run. */
const MAX_TASKS = 3000
const MIN_TASKS = 12

/** The live leg's draws: the first LIVE_DRAWS of family seed 1, each this short (ms). */
export const LIVE_DRAWS = 12
export const LIVE_SCHEDULE_MS = 15_000
export const LIVE_WARMUP_MS = 5000

const scaled = (phases: Phase[], k: number): Phase[] =>
  phases.map((p) => ({ ...p, fromMs: Math.round(p.fromMs * k) }))

/** A copy of `draw` whose schedule lasts `scheduleMs` after a warm-up of `warmupMs`. */
export function shortDraw(draw: ProviderDraw, scheduleMs: number, warmupMs: number): ProviderDraw {
  const k = scheduleMs / draw.durationMs
  const short = {
    ...draw,
    warmupMs,
    durationMs: scheduleMs,
    phases: scaled(draw.phases, k),
    tenant: draw.tenant ? scaled(draw.tenant, k) : null,
  }
  return { ...short, tasks: tasksFor(short) }
}

/**
 * Enough tasks to keep the provider busy through warm-up and schedule (a quarter more, as
 * family.ts sizes its own), so the run is about following the limit, not about running dry; not
 * many more, or the live run outlasts its schedule by the tasks left, sent at the pace it learned.
 */
function tasksFor(draw: ProviderDraw): number {
  const first = (draw.phases[0] as Phase).value
  const stretches: Phase[] = [
    { fromMs: 0, value: first },
    ...draw.phases.map((p) => ({ ...p, fromMs: p.fromMs + draw.warmupMs })),
  ]
  const end = draw.warmupMs + draw.durationMs
  const perCall = draw.binding === 'tokens' ? MEAN_TASK_ESTIMATE : 1
  // A rate limit's bucket is full at the start: a burst of work on top of its refill. Only a
  // minute's bucket holds a minute: a short schedule sized on it would outlast its refill.
  const burst = { minute: 1, 'ten-seconds': 1 / 6, second: 1 / 60, single: 0 }[draw.burst]
  let work = draw.binding === 'concurrency' ? 0 : (first * burst) / perCall
  stretches.forEach((p, i) => {
    const ms = (stretches[i + 1]?.fromMs ?? end) - p.fromMs
    if (draw.binding === 'concurrency') work += (p.value * ms) / draw.latency.medianMs
    else work += (p.value * ms) / 60_000 / perCall
  })
  return Math.round(Math.min(MAX_TASKS, Math.max(MIN_TASKS, work * 1.25)))
}

/** The id a prompt names: the server finds the drawn task by it. */
export const taskIdOf = (prompt: string): number | undefined => {
  const id = /^task (\d+)\b/.exec(prompt)?.[1]
  return id === undefined ? undefined : Number(id)
}

/**
 * A batch line per task: the prompt names the task and, for a token budget, is padded to about
 * four characters per estimated input token, so Pacer's own estimate is the one the virtual-time
 * contender is handed (family.ts's `estimate`).
 */
export function batchLines(draw: ProviderDraw, tasks: BenchTask[]): unknown[] {
  const pad = draw.binding === 'tokens'
  return tasks.map((t) => {
    const head = `task ${t.id} of #${draw.seed}`
    const filler = pad
      ? ' ' + 'lorem '.repeat(Math.max(0, t.estimate.inputTokens * 4 - 20) / 6)
      : ''
    return { type: 'live', payload: { prompt: head + filler } }
  })
}
