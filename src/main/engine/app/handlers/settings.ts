import {
  BaseUrl,
  type CommandHandlers,
  type ProviderId,
  type ProviderSettingsView,
  type SettingsView,
  type TeamLedgerBacklog,
  type TeamStoreView,
} from '../../../../shared/contract'
import { EngineError } from '../../core/errors'
import { DEFAULT_BASE_URLS, keyAnswer } from '../../providers'
import { SIM_DEFAULT_MODEL } from '../../providers/sim'
import type { EngineParts } from '../parts'
import { providerAccess } from '../provider-access'
import { providerKey } from '../secrets'
import { ENV_NAMES } from '../../providers/keys'
import { teamStoreSetting } from '../../team/store-url'
import { observabilityView, storeOtlpHeaders, testOtlp } from '../observability'

type SettingsHandlers = Pick<
  CommandHandlers,
  'settings:get' | 'settings:set' | 'secrets:set' | 'team:join' | 'otlp:headers' | 'otlp:test'
>

/**
 * The console's Settings view: defaults, retention, controller, base URLs, prices, API keys, team
 * mode (`teamBacklog`: this machine's ledger rows waiting for the team store).
 */
export function settingsHandlers(
  parts: EngineParts,
  teamBacklog: () => TeamLedgerBacklog | null = () => null,
): SettingsHandlers {
  const { claims, controller, prices, promptCaching, runner, secrets, settings } = parts
  const view = () => settingsView(parts, teamBacklog())
  return {
    'settings:get': view,
    'settings:set': (patch) => {
      try {
        if (patch.priceOverrides) prices.setOverrides(patch.priceOverrides)
      } catch (err) {
        throw EngineError.from(err, 'priceOverrides')
      }
      if (patch.baseUrls) guardEnvironmentKeys(parts, patch.baseUrls)
      if (patch.teamStore !== undefined)
        patch = { ...patch, teamStore: checkedTeamStore(patch.teamStore) }
      if (patch.otlpEndpoint) checkOtlpEndpoint(patch.otlpEndpoint)
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
      if (patch.teamStore !== undefined && parts.confirmsTeamStore) {
        settings.confirmTeamStore(patch.teamStore)
      }
      if (patch.resultTtlMs !== undefined) claims.resultTtlMs = patch.resultTtlMs
      if (patch.acceptTruncated !== undefined) claims.acceptTruncated = patch.acceptTruncated
      // A process started with --timeout keeps its own deadline.
      if (patch.callTimeoutSeconds !== undefined && !parts.callTimeoutFixed) {
        runner.setCallTimeout(patch.callTimeoutSeconds * 1000)
      }
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
      // Bound to the base URL in effect now: changing the URL later does not take the key along.
      const storedFor =
        apiKey === null || provider === 'sim'
          ? undefined
          : (providerAccess(parts, provider).effectiveBaseUrl ?? undefined)
      secrets.set(provider, apiKey, storedFor)
      return view()
    },
    'otlp:headers': ({ headers }) => {
      storeOtlpHeaders(parts, headers)
      return view()
    },
    'otlp:test': () => testOtlp(parts),
    // Nothing to try here: an engine in team mode, or asked for none. A process that runs alone
    // because its store did not answer answers this itself (team-join.ts).
    'team:join': () => view().teamStore,
  }
}

/** The settings as the console sees them: whether a key is stored, never the key. */
function settingsView(parts: EngineParts, ledgerBacklog: TeamLedgerBacklog | null): SettingsView {
  const { dbPath, settings, secrets, claims, prices, controller, promptCaching } = parts
  const s = settings.get()
  const providerView = (id: ProviderId): ProviderSettingsView => {
    const key = secrets.get(id)
    return {
      baseUrl: s.baseUrls[id] ?? null,
      hasKey: key !== null,
      // Only long keys get a hint: the last 4 of a short key reveal too much of it.
      keyHint: key && key.length >= 20 ? `…${key.slice(-4)}` : null,
      ...(id === 'sim' ? SIM_ACCESS : providerAccess(parts, id)),
    }
  }
  return {
    dbPath,
    defaultProvider: s.defaultProvider,
    defaultModel: s.defaultModel,
    resultTtlMs: claims.resultTtlMs,
    acceptTruncated: claims.acceptTruncated,
    callTimeoutSeconds: Math.ceil(parts.runner.callTimeoutMs / 1000),
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
    teamStore: teamStoreView(parts, ledgerBacklog),
    observability: observabilityView(parts),
  }
}

/** Team mode as Settings shows it (and `team:changed` pushes it). */
export function teamStoreView(
  parts: EngineParts,
  ledgerBacklog: TeamLedgerBacklog | null,
): TeamStoreView {
  return {
    stored: parts.settings.get().teamStore,
    active: parts.team?.address.display ?? null,
    problem: parts.team?.down?.message ?? parts.teamProblem,
    ...(ledgerBacklog ? { ledgerBacklog } : {}),
  }
}

/** The transports check it too; a caller of the handlers (the desktop's) gets the same answer. */
function checkOtlpEndpoint(value: string): void {
  if (!BaseUrl.safeParse(value).success) {
    throw new EngineError(
      'invalid_input',
      'otlpEndpoint: must be an http:// or https:// URL, without user:password (headers go apart)',
      'otlpEndpoint',
    )
  }
}

function checkedTeamStore(value: string | null): string | null {
  try {
    return teamStoreSetting(value)
  } catch (err) {
    throw new EngineError('invalid_input', (err as Error).message, 'teamStore')
  }
}

const SIM_ACCESS = {
  effectiveBaseUrl: null,
  baseUrlFrom: null,
  keyFrom: null,
  keyBaseUrl: null,
  keyRefusal: null,
} as const

/**
 * A stored key stays bound to the URL it was stored for (calls elsewhere are refused), so moving a
 * base URL needs no guard for it. A key from the environment never goes to a URL stored here
 * either: pointing its provider at another server is refused at once, with the way that works,
 * rather than at the next call.
 */
function guardEnvironmentKeys(
  { secrets, processBaseUrls }: EngineParts,
  baseUrls: Partial<Record<ProviderId, string | null>>,
): void {
  if (secrets.keysFrom !== 'environment') return
  for (const [id, next] of Object.entries(baseUrls) as [ProviderId, string | null][]) {
    if (id === 'sim' || next === null) continue
    const key = providerKey(secrets, id)
    if (key === null || typeof keyAnswer(id, next, key, processBaseUrls) === 'string') continue
    throw new EngineError(
      'base_url_locked',
      `${id}'s API key comes from the environment, which sends it only to ${new URL(DEFAULT_BASE_URLS[id]).origin} or a base URL given with it: to use ${next}, restart with --base-url ${next} (or ${ENV_NAMES[id]?.baseUrl}=${next})`,
      `baseUrls.${id}`,
    )
  }
}
