// The settings table through SettingsStore, on a real SQLite file: what an empty database reads
// as, what a patch writes, and what a second connection (the CLI next to the console) sees.
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS, SettingsStore } from '../../../../src/main/engine/settings/settings'
import { openLedgerDb } from '../../../helpers/ledger-db'

const PRICE = { input: 1, cachedInput: 0.5, cacheWrite: 1.25, output: 4 }

let temp: ReturnType<typeof openLedgerDb>
let store: SettingsStore
beforeEach(() => {
  temp = openLedgerDb()
  store = new SettingsStore(temp.db)
})
afterEach(() => temp.close())

/** The stored rows, as JSON text by key. */
function rows(): Record<string, string> {
  const all = temp.db.prepare('SELECT key, value FROM settings').all() as {
    key: string
    value: string
  }[]
  return Object.fromEntries(all.map((r) => [r.key, r.value]))
}

describe('SettingsStore', () => {
  it('reads an empty database as the defaults, and stores nothing for it', () => {
    expect(store.get()).toEqual(DEFAULT_SETTINGS)
    expect(rows()).toEqual({})
  })

  it('hands out copies: changing what get() returned changes neither the store nor the defaults', () => {
    const s = store.get()
    s.baseUrls.openai = 'https://changed.example'
    s.priceOverrides['m'] = PRICE
    expect(store.get()).toEqual(DEFAULT_SETTINGS)
    expect(DEFAULT_SETTINGS.baseUrls).toEqual({})
    expect(DEFAULT_SETTINGS.priceOverrides).toEqual({})
  })

  it('writes only the keys a patch names, as JSON, and returns the merged settings', () => {
    const next = store.set({ audit: true, resultTtlMs: 0 })
    expect(next).toEqual({ ...DEFAULT_SETTINGS, audit: true, resultTtlMs: 0 })
    expect(rows()).toEqual({ audit: 'true', resultTtlMs: '0' })
    expect(store.get()).toEqual(next)
  })

  it('a field given as undefined keeps its stored value', () => {
    store.set({ audit: true, defaultModel: 'sim-large' })
    store.set({ audit: undefined, defaultModel: 'sim-small' })
    expect(store.get()).toMatchObject({ audit: true, defaultModel: 'sim-small' })
  })

  it('merges base URLs per provider; null puts one back to its default', () => {
    store.set({ baseUrls: { openai: 'https://proxy.example/v1' } })
    store.set({ baseUrls: { anthropic: 'https://claude.example' } })
    expect(store.get().baseUrls).toEqual({
      openai: 'https://proxy.example/v1',
      anthropic: 'https://claude.example',
    })
    store.set({ baseUrls: { openai: null } })
    expect(store.get().baseUrls).toEqual({ openai: null, anthropic: 'https://claude.example' })
  })

  it('replaces the price overrides as a whole: a model left out loses its override', () => {
    store.set({ priceOverrides: { 'sim:a': PRICE, 'sim:b': PRICE } })
    store.set({ priceOverrides: { 'sim:b': { ...PRICE, output: 8 } } })
    expect(store.get().priceOverrides).toEqual({ 'sim:b': { ...PRICE, output: 8 } })
  })

  it('is what another connection to the same file reads (the CLI next to the console)', () => {
    store.set({ defaultProvider: 'openai', defaultModel: 'gpt-4o-mini', audit: true })
    const other = new Database(temp.file)
    try {
      expect(new SettingsStore(other).get()).toMatchObject({
        defaultProvider: 'openai',
        defaultModel: 'gpt-4o-mini',
        audit: true,
      })
    } finally {
      other.close()
    }
  })

  it('ignores a key it does not know (written by a newer version)', () => {
    temp.db.prepare('INSERT INTO settings(key, value) VALUES (?, ?)').run('futureKnob', '42')
    store.set({ audit: true })
    expect(store.get()).toEqual({ ...DEFAULT_SETTINGS, audit: true })
  })
})
