/**
 * One `pacer run` of the chaos run: a real process on the shared database, restarted after each
 * kill, as an operator would run the same command again.
 */
import { startPacer, type CliResult } from '../helpers/cli'

export class Worker {
  starts = 0
  #run: ReturnType<typeof startPacer> | undefined
  #last: CliResult | undefined
  #restartAt = 0
  #draining = false
  #killed = false
  #timer: NodeJS.Timeout | undefined

  constructor(
    readonly name: string,
    readonly file: string,
    readonly dbPath: string,
  ) {}

  /** Starts the command; when it ends, it is started again after the delay a kill asked for. */
  start(extra: string[] = []): void {
    this.starts++
    const run = startPacer([
      'run',
      this.file,
      '--db',
      this.dbPath,
      '--provider',
      'openai-compatible',
      '--model',
      'chaos',
      '--timeout',
      '3',
      '--lease',
      '5',
      '--json',
      ...extra,
    ])
    this.#run = run
    void run.done.then((result) => {
      this.#last = result
      if (this.#run === run) this.#run = undefined
      // Only a killed run is started again: one that ended by itself is left for the drain.
      if (this.#draining || !this.#killed) return
      this.#killed = false
      const delay = Math.max(0, this.#restartAt - Date.now())
      this.#timer = setTimeout(() => this.start(), delay)
    })
  }

  /** Kills the process with `signal`; the command is run again `restartMs` later. */
  kill(signal: NodeJS.Signals, restartMs: number): void {
    if (this.#run === undefined) return
    this.#restartAt = Date.now() + restartMs
    this.#killed = true
    this.#run.child.kill(signal)
  }

  /**
   * No more kills: waits for the process under way, then runs the file again until a run exits 0
   * (after a run with failed tasks, with --retry-failed) or `boundMs` ran out. The last run finds
   * the file's batch done or finishes it: either way it is the one that must end well.
   */
  async finish(boundMs: number): Promise<boolean> {
    this.#draining = true
    clearTimeout(this.#timer)
    const deadline = Date.now() + boundMs
    if (this.#run) await this.#run.done
    let extra: string[] = []
    while (Date.now() < deadline) {
      const result = await this.#once(extra)
      if (result.code === 0) return true
      extra = result.code === 1 ? ['--retry-failed'] : []
    }
    return false
  }

  async #once(extra: string[]): Promise<CliResult> {
    this.start(extra)
    const result = await this.#run!.done
    this.#last = result
    return result
  }

  lastOutput(): string {
    const out = this.#last ?? (this.#run ? { ...this.#run.output(), code: null } : undefined)
    if (out === undefined) return '(never ran)'
    return `exit ${out.code}\n${out.stderr.slice(-1500)}\n${out.stdout.slice(-800)}`
  }
}
