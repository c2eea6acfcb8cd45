import type {
  CommandError,
  ProviderId,
  Reply,
  SettingsPatch,
  SettingsView,
  TeamLedgerBacklog,
  TeamStoreView,
} from '../../../shared/contract'
import { call } from './api'
import type { SliceCreator } from './types'

export interface SettingsSlice {
  settings: SettingsView | null
  settingsError: CommandError | null
  /** Team mode: this machine's ledger rows waiting for the team store (Settings, then events). */
  teamBacklog: TeamLedgerBacklog | null

  loadSettings(): Promise<void>
  saveSettings(patch: SettingsPatch): Promise<Reply<SettingsView>>
  /** null removes the stored key. The key goes to the engine and never comes back. */
  saveSecret(provider: ProviderId, apiKey: string | null): Promise<Reply<SettingsView>>
  /** Settings → Observability's headers; null removes them. Sent to the engine, never back. */
  saveOtlpHeaders(headers: string | null): Promise<Reply<SettingsView>>
  /** Settings → Observability's Test: one span to the endpoint in effect. */
  testOtlp(): Promise<Reply<{ ok: boolean; message: string }>>
  /** Team mode's state as the engine tells it (team:changed, Try again now), its backlog too. */
  applyTeamStore(teamStore: TeamStoreView): void
  /** Settings → Team mode's "Try again now". */
  joinTeam(): Promise<Reply<TeamStoreView>>
}

/** A settings view as the store keeps it: the team ledger's backlog beside it, as of now. */
const viewed = (settings: SettingsView) => ({
  settings,
  teamBacklog: settings.teamStore.ledgerBacklog ?? null,
})

export const createSettingsSlice: SliceCreator<SettingsSlice> = (set, get) => ({
  settings: null,
  settingsError: null,
  teamBacklog: null,

  loadSettings: async () => {
    const reply = await call((api) => api.getSettings({}))
    if (reply.ok) set({ ...viewed(reply.value), settingsError: null })
    else set({ settingsError: reply.error })
  },

  saveSettings: async (patch) => {
    const reply = await call((api) => api.setSettings(patch))
    if (reply.ok) set(viewed(reply.value))
    return reply
  },

  saveSecret: async (provider, apiKey) => {
    const reply = await call((api) => api.setSecret({ provider, apiKey }))
    if (reply.ok) set(viewed(reply.value))
    return reply
  },

  saveOtlpHeaders: async (headers) => {
    const reply = await call((api) => api.setOtlpHeaders({ headers }))
    if (reply.ok) set(viewed(reply.value))
    return reply
  },

  testOtlp: () => call((api) => api.testOtlp({})),

  applyTeamStore: (teamStore) => {
    const settings = get().settings
    const teamBacklog = teamStore.ledgerBacklog ?? null
    set(settings ? { settings: { ...settings, teamStore }, teamBacklog } : { teamBacklog })
  },

  joinTeam: async () => {
    const reply = await call((api) => api.joinTeam({}))
    if (reply.ok) get().applyTeamStore(reply.value)
    return reply
  },
})
