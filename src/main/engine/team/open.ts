// Team mode as every entry point opens it (`pacer run/serve`, the desktop app): which store URL
// applies (the --store flag, else $PACER_STORE, else the database's teamStore setting), the
// connection, and the status lines an operator reads. Transport-neutral: the cli turns a failure
// into its exit code, the desktop into a status in the window while it runs on its own.
import { existsSync } from 'node:fs'
import { openDatabase } from '../db'
import { SettingsStore } from '../settings/settings'
import type { ConnectOptions, TeamStore } from './connect'
import { connectTeamStore } from './connect'
import type { StoreAddress } from './store-url'
import { parseStoreUrl, storeUrlFrom } from './store-url'

/** A store URL and where it came from (for messages): `--store`, `PACER_STORE`, the setting. */
export interface TeamChoice {
  text: string
  from: string
}

/** Where a process's database is, and the SQLite binding it loads (the desktop has its own). */
export interface DatabaseAt {
  dbPath: string
  nativeBinding?: string
}

/** The `teamStore` setting of an existing database (Settings → Team mode), if any. */
function storedSetting({ dbPath, nativeBinding }: DatabaseAt): TeamChoice | undefined {
  if (!existsSync(dbPath)) return undefined
  let db
  try {
    db = openDatabase(dbPath, { readOnly: true, nativeBinding })
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

/**
 * The team store this process uses: the flag, else $PACER_STORE, else the database's teamStore
 * setting; undefined when none (the process paces with the processes on its database alone).
 */
export function teamChoice(
  flag: string | undefined,
  database: DatabaseAt,
  env: NodeJS.ProcessEnv = process.env,
): TeamChoice | undefined {
  return storeUrlFrom(flag, env) ?? storedSetting(database)
}

/**
 * Parses the chosen URL (the password from it or $PACER_REDIS_PASSWORD) and connects. Throws a
 * StoreUrlError naming the part of the URL that is wrong, or a TeamStoreUnreachable naming
 * host:port and the cause; `report` hears every later outage and recovery, one line each.
 */
export async function connectTeam(
  choice: TeamChoice,
  report: (line: string) => void,
  options: ConnectOptions & { env?: NodeJS.ProcessEnv } = {},
): Promise<TeamStore> {
  const { env = process.env, ...connect } = options
  const address = parseStoreUrl(choice.text, choice.from, env.PACER_REDIS_PASSWORD)
  const team = await connectTeamStore(address, connect)
  team.onStatus((s) => report(s.message))
  return team
}

/** What a process in team mode says once, when it starts. */
export function teamModeLine(address: StoreAddress): string {
  return `team mode: the provider budget and the claims are shared through ${address.display} (each distinct task runs once across the machines on it), and the ledger's rows are appended there too (pacer summary --store)`
}

/** What a process that was asked for team mode and could not start it says: it runs alone. */
export function aloneLine(cause: string): string {
  return `${cause}; this process paces on this machine alone (its database) until it starts again with the store answering`
}

/** What a console process whose store did not answer says: it runs alone, and tries again. */
export function joinLaterLine(cause: string): string {
  return `${cause}; this process paces on this machine alone (its database) and joins the team when the store answers (tried again in the background, at least every 30 s)`
}
