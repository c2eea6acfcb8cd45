import type {
  CommandError,
  ProviderId,
  Reply,
  SettingsPatch,
  SettingsView,
} from '../../../shared/contract'
import { call } from './api'
import type { SliceCreator } from './types'

export interface SettingsSlice {
  settings: SettingsView | null
  settingsError: CommandError | null

  loadSettings(): Promise<void>
  saveSettings(patch: SettingsPatch): Promise<Reply<SettingsView>>
  /** null removes the stored key. The key goes to the engine and never comes back. */
  saveSecret(provider: ProviderId, apiKey: string | null): Promise<Reply<SettingsView>>
}

export const createSettingsSlice: SliceCreator<SettingsSlice> = (set) => ({
  settings: null,
  settingsError: null,

  loadSettings: async () => {
    const reply = await call((api) => api.getSettings({}))
    if (reply.ok) set({ settings: reply.value, settingsError: null })
    else set({ settingsError: reply.error })
  },

  saveSettings: async (patch) => {
    const reply = await call((api) => api.setSettings(patch))
    if (reply.ok) set({ settings: reply.value })
    return reply
  },

  saveSecret: async (provider, apiKey) => {
    const reply = await call((api) => api.setSecret({ provider, apiKey }))
    if (reply.ok) set({ settings: reply.value })
    return reply
  },
})
