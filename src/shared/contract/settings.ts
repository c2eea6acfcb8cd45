import { z } from 'zod'
import { finiteNumber } from './numbers'
import { ControllerKind } from './scheduler'
import type { TeamLedgerBacklog } from './spend'

export const ProviderId = z.enum(['sim', 'openai', 'anthropic', 'openai-compatible'])
export type ProviderId = z.infer<typeof ProviderId>

/** Settings as the console sees them: secrets are never sent, only whether one is stored. */
export interface SettingsView {
  dbPath: string
  defaultProvider: ProviderId
  defaultModel: string
  resultTtlMs: number
  /** Truncated answers (the output cap cut them) are handed out to duplicates like any other. */
  acceptTruncated: boolean
  /** One provider call's deadline in this process (a `--timeout` included), in seconds. */
  callTimeoutSeconds: number
  audit: boolean
  /** The concurrency controller the running scheduler uses (this process's, a CLI flag included). */
  controller: ControllerKind
  /**
   * Anthropic prompt caching: the stable prefix of each request marked for the cache (this
   * process's, a CLI --no-prompt-cache included).
   */
  promptCaching: boolean
  providers: Record<ProviderId, ProviderSettingsView>
  priceOverrides: Record<string, PriceView>
  priceTableVersion: string
  /** Why keys cannot be stored here, when they cannot (no OS keyring, headless mode). */
  secretStorage: { available: boolean; reason: string | null }
  /** Team mode: the Redis URL stored in Settings (never a password), and this process's store. */
  teamStore: TeamStoreView
  /** Where the spans of the batches this console runs go (OpenTelemetry, OTLP/HTTP). */
  observability: ObservabilityView
}

/** Settings → Observability: header names only, never their values. */
export interface ObservabilityView {
  /** The `otlpEndpoint` setting (a base endpoint: /v1/traces is added); null = unset. */
  endpoint: string | null
  /** The traces URL this process sends to now; null: no export. */
  effectiveUrl: string | null
  /** 'process': `--otlp` or OTEL_EXPORTER_OTLP_* given to this process (they win). */
  from: 'process' | 'settings' | null
  /** The names of the headers sent with every request (values are secrets, never shown). */
  headerNames: string[]
  /** 'environment': OTEL_EXPORTER_OTLP_HEADERS; 'store': entered here, for one endpoint. */
  headersFrom: 'environment' | 'store' | null
  /** The endpoint stored headers go to (they are not sent to another one). */
  headersEndpoint: string | null
  /** Why headers cannot be stored here (headless mode, no OS keyring); null: they can. */
  headersStorage: string | null
  /** Why the effective settings do not export, one line (a bad variable, headers held back). */
  problem: string | null
}

/** Team mode as Settings shows it; every URL here has no password or shows it as `***`. */
export interface TeamStoreView {
  /** The `teamStore` setting: what processes started without --store or PACER_STORE use. */
  stored: string | null
  /** The store this process paces through (its password masked); null: this machine alone. */
  active: string | null
  /**
   * What is wrong with team mode now, one line: the store asked for did not answer when this
   * process started (it runs alone), or the active store is out of reach. null: nothing.
   */
  problem: string | null
  /** This machine's ledger rows waiting for the team store; absent: none (`team:changed` too). */
  ledgerBacklog?: TeamLedgerBacklog
}

/** One provider in the Settings view: where this process sends its calls, and whether its key goes. */
export interface ProviderSettingsView {
  /** The base URL stored in Settings; null = unset. */
  baseUrl: string | null
  hasKey: boolean
  keyHint: string | null
  /** Where this process sends the calls (null for sim), and where that URL came from. */
  effectiveBaseUrl: string | null
  baseUrlFrom: 'process' | 'settings' | 'default' | null
  /** 'environment': the process's (headless); 'store': entered in Settings, for one base URL. */
  keyFrom: 'environment' | 'store' | null
  /** The one base URL a stored key goes to: the one in effect when it was stored. */
  keyBaseUrl: string | null
  /** Why the key is not sent to effectiveBaseUrl (one line), when it is not. */
  keyRefusal: string | null
}

export const PriceView = z.strictObject({
  input: finiteNumber.nonnegative(),
  cachedInput: finiteNumber.nonnegative(),
  cacheWrite: finiteNumber.nonnegative(),
  output: finiteNumber.nonnegative(),
})
export type PriceView = z.infer<typeof PriceView>

/**
 * Where a provider's requests go: http(s), never credentials inside the URL. (An API key is only
 * ever sent over https or to this machine: the providers refuse plain http elsewhere.)
 */
export const BaseUrl = z.url().refine(
  (value) => {
    const url = new URL(value)
    return !url.username && !url.password && (url.protocol === 'https:' || url.protocol === 'http:')
  },
  { message: 'must be an http:// or https:// URL, without user:password' },
)

/** True for 127.0.0.0/8, ::1 and localhost: the addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true
  if (h.startsWith('::ffff:')) return isLoopbackHost(h.slice('::ffff:'.length))
  return /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h)
}

/** The operator's settings, as a change to them; every field set is what the engine stores. */
export const SettingsPatch = z.strictObject({
  defaultProvider: ProviderId.optional(),
  defaultModel: z.string().min(1).max(200).optional(),
  /** How long a completed result is reused. 24 h; the seed's 900 s is a setting; 0 = forever. */
  resultTtlMs: z.number().int().nonnegative().optional(),
  /**
   * Reuse an answer the output cap cut short (finish reason `length`) for its duplicates; by
   * default a duplicate of a truncated answer executes again.
   */
  acceptTruncated: z.boolean().optional(),
  /**
   * One provider call's deadline: past it the call is aborted, ledgered as a timeout, retried once.
   * 120 s; `--timeout` overrides it for one process.
   */
  callTimeoutSeconds: z.number().int().min(1).max(86_400).optional(),
  /** Measure duplicates without deduplicating. */
  audit: z.boolean().optional(),
  /**
   * The concurrency controller of every partition: `adaptive` (the default) or the seed's AIMD.
   * Changing it swaps the running partitions' controllers at their current limit.
   */
  controller: ControllerKind.optional(),
  /**
   * Anthropic prompt caching (`cache_control` on the system prompt and on a multi-step task's
   * resent history). On by default: cache reads cost a tenth of input, writes 1.25×.
   */
  promptCaching: z.boolean().optional(),
  baseUrls: z.partialRecord(ProviderId, BaseUrl.nullable()).optional(),
  /**
   * Team mode: `redis://HOST:PORT/DB` (or `rediss://`) for processes started without --store or
   * PACER_STORE, from their next start; null turns it off. No password here: it stays in
   * PACER_REDIS_PASSWORD. The engine checks the URL.
   */
  teamStore: z.string().max(1000).nullable().optional(),
  priceOverrides: z.record(z.string().min(1), PriceView).optional(),
  /**
   * Where the console's batches send their spans (OTLP/HTTP base endpoint, /v1/traces added);
   * null turns it off. No credentials in the URL: headers are stored apart, like keys.
   */
  otlpEndpoint: BaseUrl.nullable().optional(),
})
export type SettingsPatch = z.infer<typeof SettingsPatch>
