// The exit codes every command follows, in one table (also printed by `pacer --help`).

export const EXIT = Object.freeze({
  /** Everything asked for was done. */
  done: 0,
  /** The run ended, but some tasks failed or were cancelled. */
  tasksFailed: 1,
  /** Bad usage or input: a flag, a file, a line. Nothing was run. */
  usage: 2,
  /** The database or the disk: cannot open, read-only, damaged, newer schema, full. */
  database: 3,
  /**
   * Stopped by a setup failure (a key refused or missing, an unknown model, no credit, a server
   * not reachable): its tasks stay queued; fix the cause and run the same command again.
   */
  stopped: 4,
  /**
   * Stopped by a spend cap (the run's --budget, or a kept one of `pacer budgets`): tasks not
   * started are held (queued); raise the cap and run the same command to resume exactly those.
   * Also a run refused before anything was sent because its input alone passes a cap (unless
   * --up-to-cap): the same held batch, the same way on.
   */
  budget: 5,
  /** Stopped by Ctrl-C or SIGTERM; running the same command again resumes. */
  interrupted: 130,
})

export const EXIT_CODES_HELP = `
Exit codes:
  0    done
  1    the run ended with failed or cancelled tasks
  2    bad usage or input (a flag, a file, a line): nothing was run
  3    the database or the disk (cannot open, read-only, damaged, newer schema, full)
  4    stopped by a setup failure (key refused or missing, unknown model, no credit, server
       unreachable): its tasks stay queued; fix the cause and run the same command again
  5    stopped by a spend cap (--budget, or pacer budgets), or refused by one at the start:
       tasks not started are held; raise the cap (or --up-to-cap) and run the same command
  130  interrupted (Ctrl-C, SIGTERM): run the same command again to resume`
