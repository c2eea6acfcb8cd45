// A console process (the desktop app, `pacer serve`) whose team store did not answer when it
// started runs alone and tries the store again in the background: after 1 s, doubling to 30 s, on
// unref'd timers, silently. When the store answers it reopens its engine in team mode as its
// start would have, but only while no batch runs in it: a batch half paced and claimed alone and
// half with the team is what this waits to avoid; then it joins when the batch ends. From the
// swap on, every claim goes through the team's store, so a task the team completed meanwhile is
// reused here, not run again.
import { backoff } from '../core/backoff'
import type { Engine, EngineOptions } from './engine'
import type { TeamStore } from '../team/connect'
import { TeamStoreUnreachable } from '../team/connect'
import { switchingEngine, type SwitchingEngine } from './switching-engine'
import { joinLaterLine, teamModeLine } from '../team/open'

export interface TeamJoinOptions {
  /** Connects to the team's store (connectTeam): throws while it does not answer. */
  connect: () => Promise<TeamStore>
  /** Opens this process's engine, these options over its own (createEngine, as at its start). */
  open: (extra: Pick<EngineOptions, 'team' | 'teamProblem' | 'checkIntegrity'>) => Engine
  /** Status lines: team mode on, alone and why, joined. Nothing per attempt. */
  log: (line: string) => void
  /** @default 1000 */
  firstDelayMs?: number
  /** @default 30_000 */
  maxDelayMs?: number
  /** How often a running batch is looked at for its end once the store answers. @default 1000 */
  batchCheckMs?: number
}

/**
 * Opens a console process's engine: in team mode when its store answers; alone, trying again in
 * the background, when it does not (TeamStoreUnreachable). A wrong URL throws (StoreUrlError).
 */
export async function openConsoleEngine(o: TeamJoinOptions): Promise<Engine> {
  let team: TeamStore
  try {
    team = await o.connect()
  } catch (err) {
    if (!(err instanceof TeamStoreUnreachable)) throw err
    o.log(joinLaterLine(err.message))
    return joinLater(err.message, o)
  }
  try {
    const engine = o.open({ team })
    o.log(teamModeLine(team.address))
    return engine
  } catch (err) {
    await team.close()
    throw err
  }
}

const switching = new WeakMap<Engine, SwitchingEngine>()

/** Calls `use` now, and again each time the process reopens `engine` (it joined its team). */
export function eachEngine(engine: Engine, use: () => void): void {
  use()
  switching.get(engine)?.afterSwap(use)
}

/** Whether a batch runs in this engine's process: a task in flight, or a console batch running. */
function runsBatch(engine: Engine): boolean {
  if (engine.runner.activeCount > 0) return true
  const self = engine.runner.workerId
  return engine.queue
    .listBatches()
    .some((b) => b.state === 'running' && (!b.owner || b.owner.worker === self))
}

/** The engine of a console process that started alone because its store gave this `cause`. */
export function joinLater(cause: string, o: TeamJoinOptions): Engine {
  const retries = backoff({ initialMs: o.firstDelayMs ?? 1000, maxMs: o.maxDelayMs ?? 30_000 })
  let problem: string | null = joinLaterLine(cause)
  /** Connected, waiting for the running batch to end. */
  let waiting: TeamStore | null = null
  let done = false
  let timer: NodeJS.Timeout | null = null
  let attempt: Promise<void> | null = null

  const view = async () => (await sw.current().handlers['settings:get']({})).teamStore
  const tell = () =>
    view().then(
      (v) => sw.emit('team:changed', v),
      () => {},
    )
  const setProblem = (line: string) => {
    if (line === problem) return
    problem = line
    void tell()
  }
  const later = (ms: number) => {
    timer = setTimeout(() => {
      timer = null
      void tryNow()
    }, ms)
    timer.unref()
  }
  const openJoined = (team: TeamStore): Engine => {
    waiting = null // the engine's from here on: its shutdown closes it
    try {
      const engine = o.open({ team, checkIntegrity: false })
      o.log(`team store ${team.address.display} answers: ${teamModeLine(team.address)}`)
      problem = null
      return engine
    } catch (err) {
      void team.close()
      problem = `could not open in team mode (${(err as Error).message}); this process paces on this machine alone until it starts again`
      o.log(problem)
      return o.open({ teamProblem: problem, checkIntegrity: false })
    }
  }
  const tryNow = (): Promise<void> => {
    if (attempt) return attempt
    if (done) return Promise.resolve()
    if (timer) clearTimeout(timer)
    timer = null
    attempt = (async () => {
      if (!waiting) {
        try {
          waiting = await o.connect()
        } catch (err) {
          setProblem(joinLaterLine((err as Error).message))
          if (!done) later(retries.next())
          return
        }
        if (done) {
          const team = waiting
          waiting = null
          return void (await team.close())
        }
      }
      const team = waiting
      if (
        await sw.swap(
          (old) => !runsBatch(old),
          () => openJoined(team),
        )
      ) {
        done = true
        void tell()
        return
      }
      setProblem(
        `team store ${team.address.display} answers again; this process joins the team when the running batch ends`,
      )
      later(o.batchCheckMs ?? 1000)
    })()
      .catch((err: unknown) => {
        // The old engine would not shut down, or the new one open: say so once, stop trying.
        done = true
        o.log(`could not join the team: ${(err as Error).message}`)
      })
      .finally(() => (attempt = null))
    return attempt
  }

  const sw = switchingEngine(o.open({ teamProblem: () => problem }), {
    overrides: {
      // Settings → Team mode's "Try again now": at once, and the backoff starts over.
      'team:join': async () => {
        retries.reset()
        await tryNow()
        return view()
      },
    },
    async beforeShutdown() {
      done = true
      if (timer) clearTimeout(timer)
      timer = null
      await sw.settled()
      const team = waiting
      waiting = null
      await team?.close()
    },
  })
  switching.set(sw.engine, sw)
  later(retries.next())
  return sw.engine
}
