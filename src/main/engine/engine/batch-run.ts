import type { BatchSummary } from '../../../shared/contract'
import type { Runner } from '../runner'

export interface DriveOptions {
  /** Called on every change of the batch, and at least every 200 ms. */
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
  readonly done: Promise<{ interrupted: boolean; batch: BatchSummary | null }>
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
    /** Marks the batch interrupted (it was running and this run stopped). */
    interrupt: () => void
  },
  opts: DriveOptions,
): BatchRun {
  const { batchId, runner } = deps
  const graceMs = opts.graceMs ?? 15_000
  let stopped = false
  let stopping: Promise<void> = Promise.resolve()
  let end!: () => void
  const ended = new Promise<void>((resolveEnd) => (end = resolveEnd))

  const tick = () => {
    const b = deps.batch()
    opts.onProgress?.(b)
    // Cancelled from the console: stop this process's calls for it too.
    if (b?.state === 'cancelled') runner.cancelRunning(batchId)
    const unfinished = b ? b.counts.queued + b.counts.running : 0
    if (stopped || unfinished === 0 || b?.state === 'cancelled') end()
  }
  const onBatch = (id: string) => {
    if (id === batchId) tick()
  }

  deps.start()
  const timer = setInterval(tick, PROGRESS_MS)
  runner.on('batch', onBatch)

  const done = ended.then(async () => {
    clearInterval(timer)
    runner.off('batch', onBatch)
    // A stop from here on (Ctrl-C while the last calls land) does not make a finished run
    // an interrupted one.
    const interrupted = stopped
    if (interrupted) {
      await stopping
      deps.interrupt()
    }
    // A call still in flight here belongs to a task someone else finished (we lost its lease), or
    // to a cancelled batch: let it land so the ledger shows what it cost.
    await runner.stop({ graceMs })
    return { interrupted, batch: deps.batch() }
  })

  const stop = () => {
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
