// The legs of the live bench on one short draw: real `pacer run` processes (one, or three on one
// database) against the draw served on loopback, and the same draw raced in virtual time by the
// Pacer contender. Each leg reports what the provider saw: utilization and throttled share.
import { join } from 'node:path'
import { CONTENDERS } from '../scheduler/contenders'
import { drawTasks, type ProviderDraw } from '../scheduler/family'
import { raceDraw } from '../scheduler/family-race'
import { startPacer, tempDir, writeJsonl, type CliResult } from '../../test/helpers/cli'
import { batchLines } from './draws'
import { liveServer } from './server'

export interface Leg {
  utilization: number
  throttledShare: number
  attempts: number
  /** Wall time of the leg (live), ms. */
  ms: number
  /** Why the leg cannot be trusted: a process that failed, a task not answered once. */
  trouble: string[]
}

/** Pacer as the scheduler bench races it. */
const PACER = CONTENDERS.find((c) => c.name.startsWith('Pacer (adaptive'))!

/** A process still running this long after the schedule's end is stopped and reported. */
const OVERRUN_MS = 45_000

/**
 * Runs `fn` with console.error silenced: family.ts and family-race.ts print a line per figure
 * (debugging output of the virtual-time race) that would drown the progress lines.
 */
async function quietly<T>(fn: () => Promise<T> | T): Promise<T> {
  const error = console.error
  console.error = () => {}
  try {
    return await fn()
  } finally {
    console.error = error
  }
}

/** The same short draw in virtual time, raced by the Pacer contender. */
export async function virtualLeg(draw: ProviderDraw): Promise<Leg> {
  const result = await quietly(() => raceDraw(draw, PACER))
  return {
    utilization: result.utilization,
    throttledShare: result.throttledShare,
    attempts: 0,
    ms: 0,
    trouble: [],
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
  const end = started + draw.warmupMs + draw.durationMs
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
  let overran = false
  const overrun = setTimeout(
    () => {
      overran = true
      runs.forEach((r) => r.child.kill('SIGTERM'))
    },
    end - Date.now() + OVERRUN_MS,
  )
  const results = await Promise.all(runs.map((r) => r.done))
  clearTimeout(overrun)
  await server.close()

  const trouble = overran
    ? [`still running ${OVERRUN_MS / 1000} s after the schedule: stopped`]
    : []
  trouble.push(
    ...results
      .filter(failed)
      .map(
        (r) => `exit ${r.code ?? r.signal}: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`,
      ),
  )
  const twice = [...server.answered.values()].filter((n) => n !== 1).length
  if (server.answered.size !== draw.tasks || twice > 0) {
    trouble.push(`${server.answered.size} of ${draw.tasks} tasks answered, ${twice} not once`)
  }
  if (server.strays > 0) trouble.push(`${server.strays} requests named no task`)
  const closeBooks = Math.min(end, server.lastAnswer || end)
  return {
    utilization: await quietly(() => server.provider.utilization(closeBooks)),
    throttledShare: server.attempts > 0 ? server.refused / server.attempts : 0,
    attempts: server.attempts,
    ms: Date.now() - started,
    trouble,
  }
}
