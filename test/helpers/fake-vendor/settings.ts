// A Pacer database and environment that send a provider's calls to a fake vendor.
import { join } from 'node:path'
import { createEngine } from '../../../src/main/engine/app/engine'
import { openDatabase } from '../../../src/main/engine/db'
import { SettingsStore } from '../../../src/main/engine/settings/settings'

type ProviderId = 'openai' | 'anthropic' | 'openai-compatible'

/** A price per model in USD per 1M tokens, i.e. micro-dollars per token. */
export interface Price {
  input: number
  cachedInput: number
  cacheWrite: number
  output: number
}

/** Sets `dbPath`'s Settings (the engine's way) so `provider` calls the vendor, with `prices`. */
export async function useVendor(
  dbPath: string,
  vendor: { baseUrl: string },
  options: { provider?: ProviderId; prices?: Record<string, Price> } = {},
): Promise<void> {
  const engine = createEngine({ dbPath })
  await engine.handlers['settings:set']({
    baseUrls: { [options.provider ?? 'openai-compatible']: vendor.baseUrl },
    ...(options.prices ? { priceOverrides: options.prices } : {}),
  })
  await engine.shutdown()
}

/** DIR/pacer.db whose openai-compatible provider calls the vendor, as Settings would set it. */
export function vendorDatabase(dir: string, vendor: { baseUrl: string }): string {
  const path = join(dir, 'pacer.db')
  const db = openDatabase(path)
  new SettingsStore(db).set({ baseUrls: { 'openai-compatible': vendor.baseUrl } })
  db.close()
  return path
}

/**
 * The environment of a `pacer run` on the vendor: its base URL given in the environment too
 * (where a key from the environment may go), and a key where the provider needs one.
 */
export function vendorEnv(
  provider: 'openai' | 'anthropic',
  vendor: { baseUrl: string },
): NodeJS.ProcessEnv {
  return provider === 'openai'
    ? { OPENAI_BASE_URL: vendor.baseUrl, OPENAI_API_KEY: '' }
    : { ANTHROPIC_BASE_URL: vendor.baseUrl, ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789' }
}
