import type { BatchSummary } from '../../../shared/contract'
import { endOfTurn } from '../db/step-writes'
import type { Runner } from '../runner'
import type { PartitionStop } from '../pacing/scheduler'

export interface DriveOptions {
  /**
   * Called every 200 ms and once at the end, with the batch as it stands (its counters are kept
   * as tasks change: reading them costs the same for a million tasks as for ten).
   */
  onProgress?: (batch: BatchSummary | null) => void
  /** How long in-flight calls may take to land once the run stops or ends. @default 15_000 */
  graceMs?: number
}

/** One process driving one batch to its end (`pacer run`). */
export interface BatchRun {
  /**
   * Settles when the batch has nothing queued or running, was cancelled, or the run was stopped,
   * and the calls still in flight then have landed (or were aborted after `graceMs`).
   */
  readonly done: Promise<{
    interrupted: boolean
    batch: BatchSummary | null
    /** Partitions a setup failure stopped: the run stopped with their tasks queued. */
    stops: PartitionStop[]
    /** Why the batch's cap stopped the run (its unstarted tasks held, queued); null: it did not. */
    budgetStop: string | null
  }>
  /** Admits no new call; the ones in flight finish. The batch is left interrupted. */
  stop(): void
  /** Aborts the calls in flight now: their claims are released, their tasks requeued. */
  abort(): void
}

const PROGRESS_MS = 200

/** See BatchLifecycle.drive. */
export function driveBatch(
  deps: {
    batchId: string
    runner: Runner
    start: () => void
    batch: () => BatchSummary | null
    /** The batch's state and unfinished count: cheaper than batch(), read at every task's end. */
    progress: () => { state: string; unfinished: number } | null
    /** Makes the runner's last steps durable before the caller hears the run is over. */
    commit: () => void
    /** Marks the batch interrupted (it was running and this run stopped), with why if known. */
    interrupt: (reason: string | null) => void
    /**
     * The batch was cancelled: true while calls of it still wait in provider batches being
     * cancelled at the vendor, whose finished lines land before the rest is cancelled.
     */
    landing?: () => boolean
    /** Calls `listener` when a setup failure stops a partition; returns the unsubscribe. */
    onStopped: (listener: (stop: PartitionStop) => void) => () => void
  },
  opts: DriveOptions,
): BatchRun {
  const { batchId, runner } = deps
  const graceMs = opts.graceMs ?? 15_000
  let stopped = false
  let stopping: Promise<void> = Promise.resolve()
  let end!: () => void
  const ended = new Promise<void>((resolveEnd) => (end = resolveEnd))

  let over = false
  /** Ends the run once the batch is over; true when it is. */
  const check = (): boolean => {
    // Once over, read nothing more: a look scheduled for the end of a turn may come after the
    // caller has closed the database.
    if (over) return true
    const p = deps.progress()
    if (p?.state === 'cancelled') {
      // Calls waiting in provider batches land first (cancel-batch.ts): the run goes on.
      if (!stopped && deps.landing?.()) return false
      // Cancelled from the console: stop this process's calls for it too.
      runner.cancelRunning(batchId)
    }
    if (!over && (stopped || !p || p.unfinished === 0 || p.state === 'cancelled')) {
      over = true
      opts.onProgress?.(deps.batch())
      end()
    }
    return over
  }
  const tick = () => {
    if (!check()) opts.onProgress?.(deps.batch())
  }
  // Every task's end is a 'batch' event: look whether the run is over once per turn of the loop
  // (one row read), however many tasks ended in it.
  let looking = false
  const onBatch = (id: string) => {
    if (id !== batchId || looking) return
    looking = true
    endOfTurn(() => {
      looking = false
      check()
    })
  }

  // A setup failure (bad key, unknown model, no credit, no server) would fail every task the same
  // way: the run stops as on Ctrl-C, the batch left interrupted with the reason, to resume.
  const stops: PartitionStop[] = []
  const unsubscribe = deps.onStopped((s) => {
    stops.push(s)
    stop()
  })
  // The cap refused a call: no new calls; those in flight land and settle within the grace.
  let budgetStop: string | null = null
  const onBudget = (id: string, reason: string) => {
    if (id !== batchId || budgetStop !== null) return
    budgetStop = reason
    stop()
  }
  runner.on('budget', onBudget)

  deps.start()
  const timer = setInterval(tick, PROGRESS_MS)
  runner.on('batch', onBatch)

  const done = ended.then(async () => {
    clearInterval(timer)
    runner.off('batch', onBatch)
    runner.off('budget', onBudget)
    unsubscribe()
    // A stop from here on (Ctrl-C while the last calls land) does not make a finished run
    // an interrupted one.
    const interrupted = stopped
    if (interrupted) {
      await stopping
      const reasons = [...stops.map((s) => s.reason), ...(budgetStop === null ? [] : [budgetStop])]
      deps.interrupt(reasons.length > 0 ? reasons.join('; ') : null)
    }
    // A call still in flight here belongs to a task someone else finished (we lost its lease), or
    // to a cancelled batch: let it land so the ledger shows what it cost.
    await runner.stop({ graceMs })
    deps.commit()
    return { interrupted, batch: deps.batch(), stops, budgetStop }
  })

  function stop(): void {
    if (stopped) return
    stopped = true
    stopping = runner.stop({ graceMs })
    tick()
  }
  return {
    done,
    stop,
    abort: () => {
      stop()
      void runner.stop({ graceMs: 0 })
      runner.abortAll()
    },
  }
}
