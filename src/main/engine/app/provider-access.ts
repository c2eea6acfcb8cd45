import type { ProviderSettingsView } from '../../../shared/contract'
import { baseUrlInEffect, keyAnswer, type HttpProviderId } from '../providers'
import { parseBaseUrl } from '../providers/http-options'
import { boundForm, keyForCall } from '../providers/keys'
import type { EngineParts } from './parts'
import { providerKey } from './secrets'

/** The HTTP providers, whose keys and base URLs the rule in providers/keys.ts governs. */
export const HTTP_PROVIDERS: readonly HttpProviderId[] = [
  'openai',
  'anthropic',
  'openai-compatible',
]

type Access = Omit<ProviderSettingsView, 'baseUrl' | 'hasKey' | 'keyHint'>

/**
 * How this process reaches a provider now: the base URL its calls go to, where that came from,
 * and why its key would not go there (the same check a call makes, so `pacer run` can refuse
 * before queueing anything).
 */
export function providerAccess(
  parts: Pick<EngineParts, 'settings' | 'secrets' | 'processBaseUrls'>,
  id: HttpProviderId,
): Access {
  const { url, from } = baseUrlInEffect(id, parts.processBaseUrls, parts.settings.get().baseUrls)
  const key = providerKey(parts.secrets, id)
  let keyRefusal: string | null = null
  let shown = url
  try {
    const base = parseBaseUrl(url)
    shown = boundForm(url)
    const checked = keyForCall(id, () => keyAnswer(id, url, key, parts.processBaseUrls), base)
    if ('refused' in checked) keyRefusal = `${checked.refused.error ?? 'refused'}`
  } catch (err) {
    keyRefusal = `${id}: ${(err as Error).message}`
  }
  if (keyRefusal !== null && !keyRefusal.startsWith(`${id}:`)) keyRefusal = `${id}: ${keyRefusal}`
  return {
    effectiveBaseUrl: shown,
    baseUrlFrom: from,
    keyFrom: key?.from ?? null,
    keyBaseUrl: key?.from === 'store' ? key.baseUrl : null,
    keyRefusal,
  }
}

/** Which providers' keys to check: these, or those of a batch's unfinished tasks. */
export type KeyScope = { providers: Iterable<string> } | { batchId: string }

/** The one-line refusals of the providers in scope: empty when every key may go. */
export function keyRefusals(
  parts: Pick<EngineParts, 'db' | 'settings' | 'secrets' | 'processBaseUrls'>,
  scope: KeyScope,
): string[] {
  const providers =
    'providers' in scope
      ? new Set(scope.providers)
      : // A read of the tasks view, whatever tables stand behind it.
        (
          parts.db
            .prepare(
              "SELECT DISTINCT provider FROM tasks WHERE batch_id = ? AND status IN ('queued', 'running')",
            )
            .pluck()
            .all(scope.batchId) as string[]
        ).sort()
  const out: string[] = []
  for (const id of providers) {
    if (!(HTTP_PROVIDERS as readonly string[]).includes(id)) continue
    const refusal = providerAccess(parts, id as HttpProviderId).keyRefusal
    if (refusal !== null) out.push(refusal)
  }
  return out
}
