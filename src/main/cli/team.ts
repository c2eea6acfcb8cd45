// Team mode on the command line: `--store redis://HOST:PORT/DB` (or $PACER_STORE) connects this
// process to the team's Redis before the engine opens, so its partitions share one budget with
// every machine on that server (without either, the database's teamStore setting applies if the
// user confirmed it: given to a process once, or saved in the desktop app's Settings), and
// claims: each distinct task runs once across them; its ledger rows are appended to the team's
// stream there. `pacer summary --store` and `pacer export --store` read the team's ledger. The
// flags themselves are in options.ts (loaded by `pacer --help`, which must not load the engine).
import type { Engine, EngineOptions, TeamChoice, TeamStore } from '../engine'
import {
  StoreUrlError,
  TeamStoreUnreachable,
  confirmGivenStore,
  connectTeam,
  openConsoleEngine,
  teamChoice,
  teamModeLine,
} from '../engine'
import { DatabaseError, UsageError, openEngine } from './common'
import { say } from './terminal-text'

/**
 * Opens the engine, in team mode when a store URL is given: a bad URL is a usage error naming
 * the part that is wrong, a server that does not answer is one line naming host:port and the
 * cause (exit 3). The engine's shutdown closes the connection.
 */
export async function openTeamEngine(
  flag: string | undefined,
  options: EngineOptions,
): Promise<Engine> {
  const given = teamChoice(flag, options, process.env, sayIgnored)
  if (!given) return openEngine(options)
  const team = await connectGiven(given, options.leaseMs)
  try {
    const engine = openEngine({ ...options, team })
    confirmGivenStore(engine.settings, given)
    say.err(`pacer: ${teamModeLine(team.address)}\n`)
    return engine
  } catch (err) {
    await team.close()
    throw err
  }
}

/**
 * `pacer serve`'s engine: as openTeamEngine, except that a store that does not answer is no reason
 * not to serve the console: it runs alone and joins the team when the store answers (team-join.ts).
 */
export async function openServeEngine(
  flag: string | undefined,
  options: EngineOptions,
): Promise<Engine> {
  let ignored: string | undefined
  const given = teamChoice(flag, options, process.env, (line) => {
    ignored = line
    sayIgnored(line)
  })
  // The console's Settings → Team mode shows the ignored store's line too.
  if (!given)
    return openEngine(ignored === undefined ? options : { ...options, teamProblem: ignored })
  const log = (line: string) => say.err(`pacer: ${line}\n`)
  try {
    const engine = await openConsoleEngine({
      connect: () => connectTeam(given, log, { leaseMs: options.leaseMs }),
      open: (extra) => openEngine({ ...options, ...extra }),
      log,
    })
    confirmGivenStore(engine.settings, given)
    return engine
  } catch (err) {
    if (err instanceof StoreUrlError) throw new UsageError(err.message)
    throw err
  }
}

/** An unconfirmed teamStore setting: one line, and the process runs on this machine alone. */
const sayIgnored = (line: string) => say.err(`pacer: ${line}\n`)

/**
 * Connects to a store URL given by a flag, the environment or a setting: a bad URL is a usage
 * error (exit 2), a server that does not answer a database error (exit 3).
 */
async function connectGiven(given: TeamChoice, leaseMs?: number): Promise<TeamStore> {
  try {
    return await connectTeam(given, (line) => say.err(`pacer: ${line}\n`), { leaseMs })
  } catch (err) {
    if (err instanceof StoreUrlError) throw new UsageError(err.message)
    if (err instanceof TeamStoreUnreachable) throw new DatabaseError(err.message)
    throw err
  }
}

/**
 * The team store of `pacer summary --store` and `pacer export --store`: the URL given, or
 * (`--store` alone) $PACER_STORE, else the database's confirmed teamStore setting. Nothing opens the
 * database otherwise: a machine that never ran a batch can read the team's ledger.
 */
export async function connectTeamReader(flag: string | true, dbPath: string): Promise<TeamStore> {
  let ignored: string | undefined
  const given = teamChoice(flag === true ? undefined : flag, { dbPath }, process.env, (line) => {
    ignored = line
  })
  if (!given) {
    throw new UsageError(
      ignored === undefined
        ? '--store: no team store given: pass --store redis://HOST:PORT/DB, or set PACER_STORE or the teamStore setting'
        : `--store: ${ignored}`,
    )
  }
  return connectGiven(given)
}
