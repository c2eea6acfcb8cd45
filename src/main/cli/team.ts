// Team mode on the command line: `--store redis://HOST:PORT/DB` (or $PACER_STORE) connects this
// process to the team's Redis before the engine opens, so its partitions share one budget with
// every machine on that server (without either, the database's teamStore setting applies), and
// claims: each distinct task runs once across them, and appends its ledger rows to the team's
// stream there. `pacer summary --store` and `pacer export --store` read the team's ledger.
import { existsSync } from 'node:fs'
import { Option } from 'commander'
import { openDatabase } from '../engine/db'
import { SettingsStore } from '../engine/settings'
import type { Engine, EngineOptions } from '../engine/engine'
import {
  connectTeamStore,
  TeamStoreUnreachable,
  type TeamStore,
} from '../engine/pacing/redis-connect'
import { StoreUrlError, parseStoreUrl, storeUrlFrom } from '../engine/store-url'
import { DatabaseError, UsageError, openEngine } from './common'
import { say } from './terminal-text'

/** The `teamStore` setting of an existing database (Settings → Team mode), if any. */
function storedSetting(dbPath: string): { text: string; from: string } | undefined {
  if (!existsSync(dbPath)) return undefined
  let db
  try {
    db = openDatabase(dbPath, { readOnly: true })
  } catch {
    return undefined // the engine's own open says what is wrong with the file
  }
  try {
    const url = new SettingsStore(db).get().teamStore
    return url ? { text: url, from: 'the teamStore setting' } : undefined
  } finally {
    db.close()
  }
}

/** `--store` on the commands that run tasks. */
export const storeOption = () =>
  new Option(
    '--store <url>',
    'team mode: share the provider budget and the claims with other machines through this Redis (redis://HOST:PORT/DB, rediss:// for TLS; password in the URL or $PACER_REDIS_PASSWORD; default $PACER_STORE)',
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
  const given = storeUrlFrom(flag) ?? storedSetting(options.dbPath)
  if (!given) return openEngine(options)
  const team = await connectGiven(given, options.leaseMs)
  team.onStatus((s) => say.err(`pacer: ${s.message}\n`))
  try {
    const engine = openEngine({ ...options, team })
    say.err(
      `pacer: team mode: the provider budget and the claims are shared through ${team.address.display} (each distinct task runs once across the machines on it), and the ledger's rows are appended there too (pacer summary --store)\n`,
    )
    return engine
  } catch (err) {
    await team.close()
    throw err
  }
}

/** Connects to a store URL given by a flag, the environment or a setting (`from` names which). */
async function connectGiven(
  given: { text: string; from: string },
  leaseMs?: number,
): Promise<TeamStore> {
  let address
  try {
    address = parseStoreUrl(given.text, given.from, process.env.PACER_REDIS_PASSWORD)
  } catch (err) {
    if (err instanceof StoreUrlError) throw new UsageError(err.message)
    throw err
  }
  try {
    return await connectTeamStore(address, { leaseMs })
  } catch (err) {
    if (err instanceof TeamStoreUnreachable) throw new DatabaseError(err.message)
    throw err
  }
}

/** `--store [url]` on the commands that read the team's ledger. */
export const teamLedgerOption = () =>
  new Option(
    '--store [url]',
    "the team's ledger, from this Redis (redis://HOST:PORT/DB; without a URL: $PACER_STORE, else the teamStore setting)",
  )

/**
 * The team store of `pacer summary --store` and `pacer export --store`: the URL given, or
 * (`--store` alone) $PACER_STORE, else the database's teamStore setting. Nothing opens the
 * database otherwise: a machine that never ran a batch can read the team's ledger.
 */
export async function connectTeamReader(flag: string | true, dbPath: string): Promise<TeamStore> {
  const given =
    flag === true ? (storeUrlFrom(undefined) ?? storedSetting(dbPath)) : storeUrlFrom(flag)
  if (!given) {
    throw new UsageError(
      '--store: no team store given: pass --store redis://HOST:PORT/DB, or set PACER_STORE or the teamStore setting',
    )
  }
  return connectGiven(given)
}
