// The process's exit code is decided by what happened, not by whether main() settled. Agent code
// runs in this process: a handler that calls process.exit(0), or a module whose top-level await
// never settles (the event loop empties and Node exits 0), must not end a run with work left and
// the code that says "done". While a command runs:
// - process.exit is refused with an error (ProcessExitRefused) in the code that called it: a
//   handler that calls it fails its own task, visibly, and the run goes on;
// - an exit before the command settled, with code 0, becomes 130 after Ctrl-C or else 4 (stopped,
//   its tasks stay queued), with one line saying so.
import { writeSync } from 'node:fs'
import { EXIT } from './exit-codes'

export class ProcessExitRefused extends Error {
  constructor(code: unknown) {
    super(
      `process.exit(${String(code ?? '')}) was called while pacer was running a command: refused (a handler returns its result or throws; pacer decides when the process ends)`,
    )
    this.name = 'ProcessExitRefused'
  }
}

interface Guard {
  settled: boolean
  interrupted: boolean
  realExit: typeof process.exit
}

let guard: Guard | null = null

const onExit = (code: number): void => {
  if (!guard || guard.settled) return
  if ((process.exitCode ?? code) !== 0 && code !== 0) return
  const interrupted = guard.interrupted
  process.exitCode = interrupted ? EXIT.interrupted : EXIT.stopped
  writeSync(
    2,
    interrupted
      ? 'pacer: interrupted before the command finished: run the same command again to resume\n'
      : 'pacer: the process ended before the command finished (an agent module whose top-level await never settles, or a handler whose promise never settles, with nothing left to wait on): nothing was lost; its tasks stay queued: run the same command again once that is fixed\n',
  )
}

/** Guards the process while a command runs; the returned function ends the guard. */
export function guardProcess(): () => void {
  if (guard) return () => {}
  const mine: Guard = { settled: false, interrupted: false, realExit: process.exit }
  guard = mine
  process.exit = ((code?: number | string | null) => {
    throw new ProcessExitRefused(code)
  }) as typeof process.exit
  process.on('exit', onExit)
  return () => {
    mine.settled = true
    process.exit = mine.realExit
    process.off('exit', onExit)
    if (guard === mine) guard = null
  }
}

/** A Ctrl-C or SIGTERM arrived: an exit before the command settles is an interruption. */
export function noteInterrupted(): void {
  if (guard) guard.interrupted = true
}

/** Ends the process now with this code (a second Ctrl-C), past the guard. */
export function exitNow(code: number): never {
  const exit = guard?.realExit ?? process.exit
  if (guard) guard.settled = true
  return exit(code)
}
