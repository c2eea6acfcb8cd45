// What `pacer run` says about what went wrong: the partitions a setup failure stopped (live, and
// at the end with what to do), and the failed tasks grouped by reason, one example each.
import type { Engine, FailureGroup, PartitionStop } from '../engine'
import type { PauseView } from '../../shared/contract'
import { EXIT } from './exit-codes'
import { say } from './terminal-text'

/** Exit code of a run a setup failure stopped: fix the cause, run the same command again. */
const EXIT_STOPPED = EXIT.stopped

/** The reasons shown at the end of a run; the rest are counted. */
const SHOWN_REASONS = 10

/** What `--json` adds about failures: every reason with its count and first task, and the stops. */
export interface FailureReport {
  failures: FailureGroup[]
  stopped: { partition: string; reason: string }[]
  /** Tasks left queued (a stopped partition's, or an interrupted run's). */
  queued: number
}

/** The report of a run's end. */
export function failureReport(
  engine: Engine,
  batchId: string,
  stops: readonly PartitionStop[],
  queued: number,
): FailureReport {
  return {
    failures: engine.queue.failureGroups(batchId, 50),
    stopped: stops.map((s) => ({ partition: s.partition, reason: s.reason })),
    queued,
  }
}

/** The live line when a partition stops, on stderr (above the progress bar on a terminal). */
export function printStop(stop: PartitionStop): void {
  say.err(`\npacer: ${stop.reason}\n`)
}

/**
 * A pause at least this long is said on stderr, terminal or not: a run that waits a minute or more
 * without a word looks hung (shorter ones come and go as a matter of course while pacing).
 */
export const ANNOUNCED_PAUSE_MS = 60_000

/**
 * The live line when a partition pauses for long (once per pause: one that grows longer while it
 * is said is not said again), with the way out, on stderr above the progress bar.
 */
export function pauseAnnouncer(): (pause: PauseView) => void {
  const said = new Map<string, number>()
  return (pause) => {
    if (pause.until - pause.ts < ANNOUNCED_PAUSE_MS) return
    if ((said.get(pause.partition) ?? 0) > pause.ts) {
      said.set(pause.partition, pause.until)
      return
    }
    said.set(pause.partition, pause.until)
    say.err(
      `\npacer: ${pause.partition} ${pause.reason}: waiting ${duration(pause.until - pause.ts)}; Ctrl-C stops this run (the same command resumes it)\n`,
    )
  }
}

/** `90 s`, `5 min`, `1 h 2 min`: a wait as an operator reads it. */
function duration(ms: number): string {
  const s = Math.round(ms / 1000)
  if (s < 120) return `${s} s`
  const min = Math.round(s / 60)
  if (min < 60) return `${min} min`
  const h = Math.floor(min / 60)
  return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`
}

/** The report's lines for the closing summary (none when nothing went wrong). */
export function reportLines(r: FailureReport): string[] {
  const lines: string[] = []
  if (r.failures.length > 0) {
    const tasks = r.failures.reduce((n, g) => n + g.tasks, 0)
    lines.push(`  failed tasks by reason (${tasks}):`)
    for (const g of r.failures.slice(0, SHOWN_REASONS)) {
      lines.push(`    ${g.tasks} × ${g.reason} (e.g. line ${g.example.line}, ${g.example.type})`)
    }
    const more = r.failures.length - SHOWN_REASONS
    if (more > 0) lines.push(`    ... and ${more} more reason(s) (--json lists up to 50)`)
  }
  for (const s of r.stopped) lines.push(`  ${s.reason}`)
  if (r.stopped.length > 0) {
    lines.push(
      `  ${r.queued} task(s) left queued: fix the cause, then run the same command again to resume (exit code ${EXIT_STOPPED})`,
    )
  }
  return lines
}
