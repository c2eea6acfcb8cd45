import type Database from 'better-sqlite3'
import type { SettingsPatch } from '../../../shared/contract'
import { DEFAULT_CONTROLLER } from '../pacing/controllers'
import { SIM_DEFAULT_MODEL } from '../providers/sim'

/** The operator's settings, kept in the database so the CLI and the console share them. */
export type Settings = Required<SettingsPatch>

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  defaultProvider: 'sim',
  defaultModel: SIM_DEFAULT_MODEL,
  resultTtlMs: 86_400_000,
  acceptTruncated: false,
  callTimeoutSeconds: 120,
  audit: false,
  controller: DEFAULT_CONTROLLER,
  promptCaching: true,
  baseUrls: {},
  teamStore: null,
  priceOverrides: {},
  otlpEndpoint: null,
})

/**
 * The settings key that holds the teamStore URL the user confirmed. Not a setting the console can
 * set (SettingsPatch is strict): a URL planted through a console is not joined until confirmed.
 */
const TEAM_STORE_CONFIRMED = 'teamStoreConfirmed'

/** Owns the settings table: one JSON value per key. Secrets never go here. */
export class SettingsStore {
  readonly #db: Database.Database
  readonly #get: Database.Statement
  readonly #set: Database.Statement

  constructor(db: Database.Database) {
    this.#db = db
    this.#get = db.prepare('SELECT key, value FROM settings')
    this.#set = db.prepare(
      'INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value',
    )
  }

  get(): Settings {
    const out: Settings = { ...DEFAULT_SETTINGS, baseUrls: {}, priceOverrides: {} }
    for (const row of this.#get.all() as { key: keyof Settings; value: string }[]) {
      if (row.key in out)
        (out as unknown as Record<string, unknown>)[row.key] = JSON.parse(row.value)
    }
    return out
  }

  set(patch: SettingsPatch): Settings {
    const current = this.get()
    const next: Settings = {
      ...current,
      ...stripUndefined(patch),
      baseUrls: { ...current.baseUrls, ...(patch.baseUrls ?? {}) },
      priceOverrides: patch.priceOverrides ?? current.priceOverrides,
    }
    for (const key of Object.keys(patch) as (keyof Settings)[]) {
      this.#set.run(key, JSON.stringify(next[key]))
    }
    return next
  }

  /** The teamStore setting when the user confirmed that very URL; null otherwise. */
  confirmedTeamStore(): string | null {
    const stored = this.get().teamStore
    if (stored === null) return null
    const row = this.#db
      .prepare('SELECT value FROM settings WHERE key = ?')
      .get(TEAM_STORE_CONFIRMED) as { value: string } | undefined
    return row !== undefined && JSON.parse(row.value) === stored ? stored : null
  }

  /** Records that the user confirmed this teamStore URL (as teamStoreSetting writes it). */
  confirmTeamStore(url: string | null): void {
    this.#set.run(TEAM_STORE_CONFIRMED, JSON.stringify(url))
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
