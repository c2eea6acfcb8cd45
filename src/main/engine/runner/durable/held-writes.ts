// The writes that record money already spent: a paid answer's ledger row, the result it completes
// and its task's end. With the disk full they are kept in memory and written again when there is
// room; what the run could not write by the time it stops is counted as lost (WriteHealth.held).
import type { WriteScope } from '../../db/step-writes'
import type { Held } from '../../db/write-failures'
import { isWriteFailure } from '../../db/write-failures'
import { StopSignal, type Active, type RunContext } from '../context'
import { busyWaitMs, isBusy } from '../retry'

export interface PaidWrite {
  /** What the answer behind the write cost, counted as lost if it never reaches the disk. */
  costMicros: number | null
  /** False for a write whose loss loses no answer (a task's end: its result is on disk). */
  counts?: boolean
}

/**
 * Runs `write` in the runner's write scope until its transaction is committed. Another process's
 * lock is waited out as before (up to about a minute); a full disk is waited out for as long as
 * it lasts, with the backoff of the engine's WriteHealth. When the task is stopped meanwhile, one
 * last try is made at once; if that fails too, the stop is rethrown and the answer stays counted.
 *
 * The first try is made synchronously and, when it goes in, only waits for its commit: no async
 * frame of its own (this runs two or three times per task, and its promises were a sixth of
 * what a task allocated).
 */
export function persistPaid<T>(
  ctx: RunContext,
  active: Active,
  write: () => T,
  paid: PaidWrite,
): Promise<T> {
  const { writes } = ctx.o
  let out: T
  try {
    out = writes.run(write)
  } catch (err) {
    return persistAgain(ctx, active, write, paid, err)
  }
  const committed = writes.committed ? writes.committed() : writes.durable()
  return committed.then(
    () => out,
    (err: unknown) => persistAgain(ctx, active, write, paid, err),
  )
}

/** The first try failed with `first`: waits out a busy lock or a full disk, and tries again. */
async function persistAgain<T>(
  ctx: RunContext,
  active: Active,
  write: () => T,
  paid: PaidWrite,
  first: unknown,
): Promise<T> {
  const { writes } = ctx.o
  const health = writes.health
  let held: Held | undefined
  let err = first
  for (let busy = 1; ;) {
    if (isBusy(err) && busy < 8) {
      await new Promise((r) => setTimeout(r, busyWaitMs(busy++)))
    } else {
      if (!health || !isWriteFailure(err)) throw err
      health.fail(err)
      if (paid.counts !== false) held ??= health.hold(paid.costMicros)
      try {
        await health.retryWhenRoom(active.controller.signal)
      } catch (stopped) {
        return lastTry(ctx, write, held, stopped)
      }
    }
    try {
      const out = writes.run(write)
      await (writes.committed ? writes.committed() : writes.durable())
      held?.release()
      return out
    } catch (again) {
      err = again
    }
  }
}

/**
 * A task's end, kept until written: a task whose end is lost would run again and find its own
 * result. False when stopped with the disk still full: the task stays running until its lease
 * runs out, and the next run finds its result (claim.ts reuse) without paying or counting a reuse.
 * `row`, the ledger row the end brings (a reuse's), goes in the same write, after the end and only
 * if it ended: a transaction rolled back takes both and the retry writes both; an end that finds
 * the task no longer this worker's (its lease ran out, another worker ended it and wrote its own
 * row) writes none. Written apart, the rollback took the row alone and the task still ended
 * reused, with no reuse on the ledger.
 */
export function persistEnd(
  ctx: RunContext,
  active: Active,
  end: () => boolean,
  row?: () => void,
): Promise<boolean> {
  const { writes } = ctx.o
  // A try whose row failed after its end went in (SQLite rolled back the row's statement alone)
  // leaves the end in its transaction: written again only if that transaction was lost (plain
  // writes, with no transaction to lose, committed it).
  let tried = false
  let endIn: number | undefined
  let ended = false
  const write = !row
    ? end
    : () => {
        if (!tried || (endIn !== undefined && writes.lost?.(endIn) !== false)) {
          ended = end()
          tried = true
          endIn = writes.generation
        }
        if (ended) row()
        return ended
      }
  return persistPaid(ctx, active, write, { costMicros: null, counts: false }).catch((err) => {
    if (err instanceof StopSignal) return false
    throw err
  })
}

/** Stopping: one synchronous try; the stop goes on either way, with the answer written or not. */
function lastTry<T>(ctx: RunContext, write: () => T, held: Held | undefined, stopped: unknown): T {
  const { writes } = ctx.o
  try {
    const out = writes.run(write)
    writes.commit()
    held?.release()
    return out
  } catch {
    throw stopped
  }
}

/**
 * Writes what goes on disk just before a call is sent (its journal intent). While the disk is full
 * it waits for the database to take writes and writes it then, as the gate after it waits: a task
 * that gave its claim back here, between the steps it paid for, would hand its execution to a
 * duplicate (which replays those steps and runs the rest as another task's). A stop ends the wait.
 * Written at once (the usual case), it returns nothing to wait for: no async frame of its own.
 */
export function writeBeforeSend(
  ctx: RunContext,
  active: Active,
  write: (() => void) | undefined,
): Promise<void> | undefined {
  try {
    write?.()
    return undefined
  } catch (err) {
    return writeWhenRoom(ctx, active, write!, err)
  }
}

async function writeWhenRoom(
  ctx: RunContext,
  active: Active,
  write: () => void,
  first: unknown,
): Promise<void> {
  const health = ctx.o.writes.health
  for (let err = first; ;) {
    if (!health?.fail(err)) throw err
    await health.admitted(active.controller.signal)
    try {
      write()
      return
    } catch (again) {
      err = again
    }
  }
}

/**
 * The gate before a call is sent (RunContext.onDisk). Until its first call the task's pick and
 * claim must be on disk: a transaction lost since the pick may have taken them, and the queue and
 * the claims would both say the task is free. After that, its own writes are on disk already
 * (persistPaid), and losing others' must not make it drop the steps it paid for: it only waits
 * for the database to take writes.
 */
export async function sendGate(writes: WriteScope, active: Active): Promise<void> {
  // The task's signal: a call that reaches the gate after a stop cancelled the admissions waiting
  // would otherwise wait for room on a timer that does not keep the process alive, and the
  // process would end with code 0 before reporting the answers it lost.
  const { signal } = active.controller
  if (active.unconfirmed === undefined && writes.committed && writes.health) {
    await writes.committed().catch(() => undefined)
    await writes.health.admitted(signal)
    return
  }
  await writes.durable(active.unconfirmed, signal)
  active.unconfirmed = undefined
}

/**
 * Claim releases and requeues: tried at once, and again once the database takes writes if the
 * disk is full, or the other workers would wait a whole lease for them. One that went in and was
 * then rolled back with its transaction (a later write of it met the full disk) is tried again
 * too: lost, it left the claim running and its duplicates waited out the lease (30 s).
 */
export class GiveBacks {
  readonly #writes: WriteScope
  readonly #warn: (message: string) => void
  #pending: (() => void)[] = []
  /** Written in the scope's open transaction (number #openIn): a rollback would take them. */
  #open: (() => void)[] = []
  #openIn: number | undefined = undefined

  constructor(writes: WriteScope, warn: (message: string) => void) {
    this.#writes = writes
    this.#warn = warn
    // The scope still numbers the lost transaction when it says so.
    writes.onRollback?.(() => {
      if (writes.generation === this.#openIn) this.#pending.push(...this.#open)
      this.#open = []
    })
  }

  run(write: () => void): void {
    try {
      write()
    } catch (err) {
      if (!this.#writes.health?.fail(err)) {
        this.#warn(`giving a task back failed: ${(err as Error).message}`)
        return
      }
      this.#pending.push(write)
      return
    }
    const generation = this.#writes.generation
    // Plain writes (no scope) commit each statement: nothing is rolled back behind our back.
    if (generation === undefined) return
    // Another transaction since: the previous one committed (a rollback would have said so).
    if (generation !== this.#openIn) {
      this.#open = []
      this.#openIn = generation
    }
    this.#open.push(write)
  }

  /** The database takes writes again: what waited is tried once more. */
  retry(): void {
    const pending = this.#pending
    this.#pending = []
    for (const write of pending) this.run(write)
  }
}
