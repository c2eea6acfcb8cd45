// The legs of the live bench on one short draw: real `pacer run` processes (one, or three on one
// database) against the draw served on loopback, and the same draw raced in virtual time by the
// Pacer contender. Each leg reports what the provider saw: utilization and throttled share.
import { join } from 'node:path'
import { CONTENDERS } from '../scheduler/contenders'
import { drawTasks, type ProviderDraw } from '../scheduler/family'
import { raceDraw } from '../scheduler/family-race'
import { pacerProcesses } from '../scheduler/processes'
import { startPacer, tempDir, writeJsonl, type CliResult } from '../../test/helpers/cli'
import { batchLines } from './draws'
import { liveServer } from './server'

export interface Leg {
  utilization: number
  throttledShare: number
  attempts: number
  /** Wall time of the leg (live), ms. */
  ms: number
  /** Why the leg cannot be trusted: a process that failed, a task answered twice or never. */
  trouble: string[]
  /** Tasks left unanswered when the processes were stopped after the grace (0: none stopped). */
  left: number
}

/** Pacer as the scheduler bench races it. */
const PACER = CONTENDERS.find((c) => c.name.startsWith('Pacer (adaptive'))!

/**
 * The figures close at the schedule's end: processes still running GRACE_MS after it are asked to
 * stop (SIGINT, as Ctrl-C: in-flight calls finish) and the tasks they left are reported; one still
 * running STOP_MS later is killed, a crash.
 */
const GRACE_MS = 5000
const STOP_MS = 30_000

/**
 * The same short draw in virtual time, raced by the Pacer contender: one process, or `processes`
 * on one database file (bench/scheduler/processes.ts), as the live leg runs them.
 */
export async function virtualLeg(draw: ProviderDraw, processes = 1): Promise<Leg> {
  const result = await raceDraw(draw, processes === 1 ? PACER : pacerProcesses(processes))
  return {
    utilization: result.utilization,
    throttledShare: result.throttledShare,
    attempts: 0,
    ms: 0,
    trouble: [],
    left: 0,
  }
}

/** The tasks split round-robin between `processes` batch files. */
function batchFiles(dir: string, draw: ProviderDraw, processes: number): string[] {
  const lines = batchLines(draw, drawTasks(draw))
  return Array.from({ length: processes }, (_, p) =>
    writeJsonl(
      dir,
      `p${p + 1}.jsonl`,
      lines.filter((_, i) => i % processes === p),
    ),
  )
}

const failed = (r: CliResult) => r.code !== 0 || r.signal !== null

/** `processes` real `pacer run` processes on one database against the draw served live. */
export async function liveLeg(draw: ProviderDraw, processes: number): Promise<Leg> {
  const dir = tempDir('pacer-live-')
  const home = tempDir('pacer-live-home-')
  const db = join(dir, 'pacer.db')
  const files = batchFiles(dir, draw, processes)
  const server = await liveServer(draw)
  const started = Date.now()
  // The draw's clock starts at the first call (server.ts); until one comes, at the start.
  let end = started + draw.warmupMs + draw.durationMs
  const runs = files.map((file) =>
    startPacer(
      [
        'run',
        file,
        '--db',
        db,
        '--json',
        '--provider',
        'openai-compatible',
        '--model',
        'live',
        '--base-url',
        server.baseUrl,
        // The virtual contender estimates an answer at 600 tokens: the cap gives Pacer the same.
        '--max-tokens',
        '600',
      ],
      { HOME: home },
    ),
  )
  let stopped = false
  const stop = (signal: NodeJS.Signals) => () => {
    stopped = true
    runs.forEach((r) => r.child.kill(signal))
  }
  const timers: NodeJS.Timeout[] = []
  const stopAt = (at: number) => {
    end = at + draw.warmupMs + draw.durationMs
    timers.forEach(clearTimeout)
    timers.length = 0
    timers.push(
      setTimeout(stop('SIGINT'), end - Date.now() + GRACE_MS),
      setTimeout(stop('SIGKILL'), end - Date.now() + GRACE_MS + STOP_MS),
    )
  }
  stopAt(started)
  void server.firstCall.then(stopAt)
  const results = await Promise.all(runs.map((r) => r.done))
  timers.forEach(clearTimeout)
  await server.close()

  // Ctrl-C's exit (130, or the signal itself if it came while exiting) after the grace is the
  // bench's doing; anything else failed.
  const byStop = (r: CliResult) => stopped && (r.code === 130 || r.signal === 'SIGINT')
  const trouble = results
    .filter((r) => failed(r) && !byStop(r))
    .map((r) => `exit ${r.code ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`)
  const twice = [...server.answered.values()].filter((n) => n !== 1).length
  if (twice > 0) trouble.push(`${twice} tasks answered more than once`)
  const left = draw.tasks - server.answered.size
  if (left > 0 && !stopped) trouble.push(`${left} of ${draw.tasks} tasks not answered`)
  if (server.strays > 0) trouble.push(`${server.strays} requests named no task`)
  const closeBooks = Math.min(end, server.lastAnswer || end)
  return {
    utilization: server.provider().utilization(closeBooks),
    throttledShare: server.attempts > 0 ? server.refused / server.attempts : 0,
    attempts: server.attempts,
    ms: Date.now() - started,
    trouble,
    left: stopped ? left : 0,
  }
}
