import type { CommandHandlers, ProviderId, SettingsView } from '../../../../shared/contract'
import { EngineError } from '../../errors'
import { DEFAULT_BASE_URLS, type HttpProviderId } from '../../providers'
import { SIM_DEFAULT_MODEL } from '../../providers/sim'
import type { EngineParts } from '../parts'

type SettingsHandlers = Pick<CommandHandlers, 'settings:get' | 'settings:set' | 'secrets:set'>

/** The console's Settings view: defaults, retention, controller, base URLs, prices, API keys. */
export function settingsHandlers(parts: EngineParts): SettingsHandlers {
  const { claims, controller, prices, promptCaching, runner, secrets, settings } = parts
  const view = () => settingsView(parts)
  return {
    'settings:get': view,
    'settings:set': (patch) => {
      try {
        if (patch.priceOverrides) prices.setOverrides(patch.priceOverrides)
      } catch (err) {
        throw EngineError.from(err, 'priceOverrides')
      }
      if (patch.baseUrls) guardKeysOnNewOrigins(parts, patch.baseUrls)
      const current = settings.get()
      if (
        patch.defaultProvider !== undefined &&
        patch.defaultProvider !== current.defaultProvider &&
        patch.defaultModel === undefined
      ) {
        // The old default model belongs to the old provider (sim-small on openai is a 404).
        if (patch.defaultProvider !== 'sim') {
          throw new EngineError(
            'invalid_input',
            `defaultModel: required when the default provider changes to ${patch.defaultProvider}`,
            'defaultModel',
          )
        }
        patch = { ...patch, defaultModel: SIM_DEFAULT_MODEL }
      }
      // The running scheduler first: a stored setting it does not run would be a lie.
      if (patch.controller !== undefined && patch.controller !== controller.kind) {
        controller.set(patch.controller)
        runner.pump()
      }
      settings.set(patch)
      if (patch.resultTtlMs !== undefined) claims.resultTtlMs = patch.resultTtlMs
      if (patch.promptCaching !== undefined) promptCaching.set(patch.promptCaching)
      return view()
    },
    'secrets:set': ({ provider, apiKey }) => {
      // Removing a key must work even when the keyring is gone: that is when it matters most.
      if (!secrets.set || (!secrets.available && apiKey !== null)) {
        throw new EngineError(
          'secret_storage_unavailable',
          secrets.reason ?? 'API keys cannot be stored here',
          'apiKey',
        )
      }
      secrets.set(provider, apiKey)
      return view()
    },
  }
}

/** The settings as the console sees them: whether a key is stored, never the key. */
function settingsView(parts: EngineParts): SettingsView {
  const { dbPath, settings, secrets, claims, prices, controller, promptCaching } = parts
  const s = settings.get()
  const providerView = (id: ProviderId) => {
    const key = secrets.get(id)
    return {
      baseUrl: s.baseUrls[id] ?? null,
      hasKey: key !== null,
      // Only long keys get a hint: the last 4 of a short key reveal too much of it.
      keyHint: key && key.length >= 20 ? `…${key.slice(-4)}` : null,
    }
  }
  return {
    dbPath,
    defaultProvider: s.defaultProvider,
    defaultModel: s.defaultModel,
    resultTtlMs: claims.resultTtlMs,
    audit: s.audit,
    controller: controller.kind,
    promptCaching: promptCaching.enabled,
    providers: {
      sim: providerView('sim'),
      openai: providerView('openai'),
      anthropic: providerView('anthropic'),
      'openai-compatible': providerView('openai-compatible'),
    },
    priceOverrides: s.priceOverrides,
    priceTableVersion: prices.version,
    secretStorage: { available: secrets.available, reason: secrets.reason },
  }
}

/**
 * An API key goes only where it was entered for. Pointing a provider that has a key at another
 * origin removes the stored key (the operator enters it again for the new server); a key from
 * the environment cannot be removed, so its provider's base URL cannot be moved.
 */
function guardKeysOnNewOrigins(
  { settings, secrets }: EngineParts,
  baseUrls: Partial<Record<ProviderId, string | null>>,
): void {
  const current = settings.get().baseUrls
  for (const [id, next] of Object.entries(baseUrls) as [ProviderId, string | null][]) {
    if (id === 'sim' || secrets.get(id) === null) continue
    const origin = (url: string | null | undefined) =>
      new URL(url ?? DEFAULT_BASE_URLS[id as HttpProviderId]).origin
    if (origin(next) === origin(current[id])) continue
    if (!secrets.set) {
      throw new EngineError(
        'base_url_locked',
        `${id}'s API key comes from the environment: its base URL cannot be moved to another server here (the key would go there)`,
        `baseUrls.${id}`,
      )
    }
    secrets.set(id, null)
  }
}
