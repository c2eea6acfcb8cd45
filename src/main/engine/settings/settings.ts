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
})

/** Owns the settings table: one JSON value per key. Secrets never go here. */
export class SettingsStore {
  readonly #get: Database.Statement
  readonly #set: Database.Statement

  constructor(db: Database.Database) {
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
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
