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
import { maskUrl, parseStoreUrl, storeUrlFrom } from './store-url'

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

/**
 * The `teamStore` setting of an existing database (Settings → Team mode), if any, when the user
 * confirmed it; an unconfirmed one is told to `ignored` and not used.
 */
function storedSetting(
  { dbPath, nativeBinding }: DatabaseAt,
  ignored: (line: string) => void,
): TeamChoice | undefined {
  if (!existsSync(dbPath)) return undefined
  let db
  try {
    db = openDatabase(dbPath, { readOnly: true, nativeBinding })
  } catch {
    return undefined // the engine's own open says what is wrong with the file
  }
  try {
    const settings = new SettingsStore(db)
    const url = settings.get().teamStore
    if (!url) return undefined
    if (settings.confirmedTeamStore() === url) return { text: url, from: 'the teamStore setting' }
    ignored(unconfirmedStoreLine(url))
    return undefined
  } finally {
    db.close()
  }
}

/**
 * What a process says when the database names a team store nobody confirmed (a console may have
 * planted it): joining it would share claims, and so reuse whatever results that Redis holds.
 */
export function unconfirmedStoreLine(url: string): string {
  const shown = maskUrl(url)
  return `the teamStore setting ${shown} was never confirmed on this machine (a console others may reach can store it), so it is ignored and this process paces on this machine alone; to use it, pass --store ${shown} (or set PACER_STORE), which also confirms it for later runs, or save it in the desktop app's Settings`
}

/**
 * The team store this process uses: the flag, else $PACER_STORE, else the database's teamStore
 * setting if the user confirmed it (said to `ignored` when not); undefined when none (the process
 * paces with the processes on its database alone).
 */
export function teamChoice(
  flag: string | undefined,
  database: DatabaseAt,
  env: NodeJS.ProcessEnv = process.env,
  ignored: (line: string) => void = () => {},
): TeamChoice | undefined {
  return storeUrlFrom(flag, env) ?? storedSetting(database, ignored)
}

/**
 * A process given a store (--store, PACER_STORE) that the teamStore setting names too confirms the
 * setting: later processes started without either join it. Nothing else confirms it outside the
 * desktop app's Settings, so a URL a console planted is joined only once someone runs with it.
 */
export function confirmGivenStore(settings: SettingsStore, given: TeamChoice): boolean {
  if (given.from === 'the teamStore setting') return false
  let stored: string
  try {
    stored = parseStoreUrl(given.text, given.from).stored
  } catch {
    return false
  }
  if (settings.get().teamStore !== stored || settings.confirmedTeamStore() === stored) return false
  settings.confirmTeamStore(stored)
  return true
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
