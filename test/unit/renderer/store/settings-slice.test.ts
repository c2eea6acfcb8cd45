import { describe, expect, it } from 'vitest'
import type { SettingsView } from '../../../../src/shared/contract'
import { fail, ok, storeOnFakePacer } from './fake-pacer'

const view = (patch: Partial<SettingsView> = {}) =>
  ({
    audit: false,
    resultTtlMs: 3_600_000,
    teamStore: { stored: null, active: null, problem: null },
    ...patch,
  }) as SettingsView

describe('settings slice', () => {
  it('loads the settings, or keeps the error to show in the view', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('settings:get', () => fail('db_locked'))
    await store.getState().loadSettings()
    expect(store.getState()).toMatchObject({ settings: null, settingsError: { code: 'db_locked' } })
    fake.on('settings:get', () => ok(view()))
    await store.getState().loadSettings()
    expect(store.getState()).toMatchObject({ settings: view(), settingsError: null })
  })

  it('saves a patch and shows what the engine answered', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('settings:set', ({ resultTtlMs }) => ok(view({ resultTtlMs })))
    expect(await store.getState().saveSettings({ resultTtlMs: 7_200_000 })).toEqual(
      ok(view({ resultTtlMs: 7_200_000 })),
    )
    expect(store.getState().settings?.resultTtlMs).toBe(7_200_000)
    fake.on('settings:set', () => fail('invalid_input'))
    await store.getState().saveSettings({ resultTtlMs: -1 })
    expect(store.getState().settings?.resultTtlMs).toBe(7_200_000)
  })

  it('sends a key or its removal, keeping only the view that comes back', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('secrets:set', () => ok(view({ audit: true })))
    await store.getState().saveSecret('openai', 'sk-test')
    await store.getState().saveSecret('openai', null)
    expect(fake.inputs('secrets:set')).toEqual([
      { provider: 'openai', apiKey: 'sk-test' },
      { provider: 'openai', apiKey: null },
    ])
    expect(store.getState().settings).toEqual(view({ audit: true }))
  })

  it("keeps the team ledger's backlog from the view, then as team:changed says", async () => {
    const { store, fake } = storeOnFakePacer()
    const ledgerBacklog = { rows: 12, since: 1_700_000_000_000 }
    fake.on('settings:get', () =>
      ok(
        view({
          teamStore: { stored: null, active: 'redis://h:6379/0', problem: null, ledgerBacklog },
        }),
      ),
    )
    await store.getState().loadSettings()
    expect(store.getState().teamBacklog).toEqual(ledgerBacklog)
    // team:changed: the team store's view, without a backlog once the rows are in.
    const teamStore = { stored: null, active: 'redis://h:6379/0', problem: null }
    store.getState().applyTeamStore(teamStore)
    expect(store.getState().teamBacklog).toBeNull()
    expect(store.getState().settings?.teamStore).toEqual(teamStore)
    fake.on('settings:get', () => ok(view()))
    store.getState().applyTeamStore({ ...teamStore, ledgerBacklog })
    expect(store.getState().teamBacklog).toEqual(ledgerBacklog)
    await store.getState().loadSettings()
    expect(store.getState().teamBacklog).toBeNull()
  })
})
