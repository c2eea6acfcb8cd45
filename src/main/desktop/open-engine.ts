// How the desktop app opens its engine: in team mode when $PACER_STORE or the database's
// confirmed teamStore setting names a Redis (as `pacer run/serve` do), and on its own when that
// store does not answer or its URL is wrong: a window must open either way, saying which it is.
// A store that did not answer is tried again in the background, and the app joins its team when
// it answers (team-join.ts). Electron-free, so it is unit-tested with a real database and a real
// redis-server.
import type { Engine, EngineOptions } from '../engine'
import {
  StoreUrlError,
  aloneLine,
  connectTeam,
  createEngine,
  openConsoleEngine,
  teamChoice,
} from '../engine'

export interface DesktopEngineOptions {
  /** @default process.env */
  env?: NodeJS.ProcessEnv
  /** Status lines (team mode on, off and why, the store gone and back). @default console.error */
  log?: (line: string) => void
  /** How long the store may take to answer at start. @default 5000 */
  connectTimeoutMs?: number
  /** The first wait before the store is tried again (doubling to 30 s). @default 1000 */
  retryDelayMs?: number
}

/**
 * Opens the desktop's engine, in team mode when a store is set and answers. A store that does not
 * answer is no reason not to start: the engine opens without it, Settings shows why
 * (`teamStore.problem`), and it joins the team once the store answers, between batches. A wrong
 * URL keeps it alone until the app starts again.
 */
export async function openDesktopEngine(
  options: EngineOptions,
  o: DesktopEngineOptions = {},
): Promise<Engine> {
  const { env = process.env, log = (line) => console.error(`pacer: ${line}`) } = o
  // The window is the user's own: a teamStore saved in its Settings is confirmed (unlike one saved
  // through `pacer serve`'s console, which others may reach).
  options = { ...options, confirmsTeamStore: true }
  let ignored: string | undefined
  const choice = teamChoice(undefined, options, env, (line) => {
    ignored = line
    log(line)
  })
  if (!choice) return createEngine(ignored ? { ...options, teamProblem: ignored } : options)
  try {
    return await openConsoleEngine({
      connect: () =>
        connectTeam(choice, log, {
          env,
          leaseMs: options.leaseMs,
          connectTimeoutMs: o.connectTimeoutMs,
        }),
      open: (extra) => createEngine({ ...options, ...extra }),
      log,
      firstDelayMs: o.retryDelayMs,
    })
  } catch (err) {
    if (!(err instanceof StoreUrlError)) throw err
    const problem = aloneLine(err.message)
    log(problem)
    return createEngine({ ...options, teamProblem: problem })
  }
}
