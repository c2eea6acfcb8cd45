// What `pacer run` says about what went wrong: the partitions a setup failure stopped (live, and
// at the end with what to do), and the failed tasks grouped by reason, one example each.
import type { Engine, FailureGroup, PartitionStop } from '../engine'
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
