import type { ProviderId } from '../../../shared/contract'

/** Where API keys live: the desktop's safeStorage vault, or the environment in headless mode. */
export interface SecretsAccess {
  get(provider: ProviderId): string | null
  set?(provider: ProviderId, apiKey: string | null): void
  readonly available: boolean
  readonly reason: string | null
}

/** Headless mode: keys come from the environment and are never written anywhere. */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): SecretsAccess {
  const vars: Record<ProviderId, string | undefined> = {
    sim: undefined,
    openai: env.OPENAI_API_KEY,
    anthropic: env.ANTHROPIC_API_KEY,
    'openai-compatible': env.PACER_OPENAI_COMPATIBLE_API_KEY,
  }
  return {
    get: (provider) => vars[provider] || null,
    available: false,
    reason:
      'headless mode keeps no keys: set OPENAI_API_KEY, ANTHROPIC_API_KEY or PACER_OPENAI_COMPATIBLE_API_KEY in the environment of `pacer serve`',
  }
}
