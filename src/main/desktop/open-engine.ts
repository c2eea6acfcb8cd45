// How the desktop app opens its engine: in team mode when $PACER_STORE or the database's
// teamStore setting names a Redis (as `pacer run/serve` do), and on its own when that store does
// not answer or its URL is wrong: a window must open either way, saying which it is. Electron-free,
// so it is unit-tested with a real database and a real redis-server.
import type { Engine, EngineOptions } from '../engine/engine'
import { createEngine } from '../engine/engine'
import { aloneLine, connectTeam, teamChoice, teamModeLine } from '../engine/engine/team-open'
import { TeamStoreUnreachable } from '../engine/pacing/redis-connect'
import { StoreUrlError } from '../engine/store-url'

export interface DesktopEngineOptions {
  /** @default process.env */
  env?: NodeJS.ProcessEnv
  /** Status lines (team mode on, off and why, the store gone and back). @default console.error */
  log?: (line: string) => void
  /** How long the store may take to answer at start. @default 5000 */
  connectTimeoutMs?: number
}

/**
 * Opens the desktop's engine, in team mode when a store is set and answers. A store that does not
 * answer (or a URL that is wrong) is no reason not to start: the engine opens without it, and
 * Settings shows why (`teamStore.problem`) until the app starts again with the store answering.
 */
export async function openDesktopEngine(
  options: EngineOptions,
  o: DesktopEngineOptions = {},
): Promise<Engine> {
  const { env = process.env, log = (line) => console.error(`pacer: ${line}`) } = o
  const choice = teamChoice(undefined, options, env)
  if (!choice) return createEngine(options)
  let team
  try {
    team = await connectTeam(choice, log, {
      env,
      leaseMs: options.leaseMs,
      connectTimeoutMs: o.connectTimeoutMs,
    })
  } catch (err) {
    if (!(err instanceof TeamStoreUnreachable || err instanceof StoreUrlError)) throw err
    const problem = aloneLine(err.message)
    log(problem)
    return createEngine({ ...options, teamProblem: problem })
  }
  try {
    const engine = createEngine({ ...options, team })
    log(teamModeLine(team.address))
    return engine
  } catch (err) {
    await team.close()
    throw err
  }
}
