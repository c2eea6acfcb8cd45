// Team mode on the command line: `--store redis://HOST:PORT/DB` (or $PACER_STORE) connects this
// process to the team's Redis before the engine opens, so its partitions share one budget with
// every machine on that server (without either, the database's teamStore setting applies). Claims
// and the ledger stay in this machine's database for now.
import { Option } from 'commander'
import type { Engine, EngineOptions } from '../engine/engine'
import { connectTeam, teamChoice, teamModeLine } from '../engine/engine/team-open'
import { TeamStoreUnreachable } from '../engine/pacing/redis-connect'
import { StoreUrlError } from '../engine/store-url'
import { DatabaseError, UsageError, openEngine } from './common'
import { say } from './terminal-text'

/** `--store` on the commands that run tasks. */
export const storeOption = () =>
  new Option(
    '--store <url>',
    'team mode: share the provider budget with other machines through this Redis (redis://HOST:PORT/DB, rediss:// for TLS; password in the URL or $PACER_REDIS_PASSWORD; default $PACER_STORE)',
  )

/**
 * Opens the engine, in team mode when a store URL is given: a bad URL is a usage error naming
 * the part that is wrong, a server that does not answer is one line naming host:port and the
 * cause (exit 3). The engine's shutdown closes the connection.
 */
export async function openTeamEngine(
  flag: string | undefined,
  options: EngineOptions,
): Promise<Engine> {
  const given = teamChoice(flag, options)
  if (!given) return openEngine(options)
  let team
  try {
    team = await connectTeam(given, (line) => say.err(`pacer: ${line}\n`), {
      leaseMs: options.leaseMs,
    })
  } catch (err) {
    if (err instanceof StoreUrlError) throw new UsageError(err.message)
    if (err instanceof TeamStoreUnreachable) throw new DatabaseError(err.message)
    throw err
  }
  try {
    const engine = openEngine({ ...options, team })
    say.err(`pacer: ${teamModeLine(team.address)}\n`)
    return engine
  } catch (err) {
    await team.close()
    throw err
  }
}
