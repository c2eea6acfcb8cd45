import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { Usage } from './types'

/** USD per 1M tokens. Usage × price is micro-dollars exactly, so no unit conversion hides here. */
export interface ModelPrice {
  input: number
  /** Input tokens read from a prompt cache. */
  cachedInput: number
  /** Input tokens written to a prompt cache (Anthropic bills these above the input price). */
  cacheWrite: number
  output: number
}

/** Identifies the bundled table; written on every ledger row as `price_version`. */
export const PRICE_TABLE_VERSION = '2026-11-01'

/**
 * List prices (standard tier, no batch discount) as published by the vendors, recorded for
 * PRICE_TABLE_VERSION. They are bundled so Pacer prices calls offline; vendors change them, so every
 * entry can be replaced through `Prices` overrides (Settings) without a release. They were compiled
 * without network access: check them against the vendor pricing pages before billing anyone.
 *
 * Known simplifications, each an understatement the operator can fix with an override:
 * - OpenAI bills no cache writes, so `cacheWrite` = `input` (OpenAI never reports such tokens);
 * - Anthropic's 1-hour cache writes (2× input) are priced at the 5-minute rate (1.25× input);
 * - long-context premiums (e.g. Sonnet 4 / 4.5 above 200k input tokens) are not modelled.
 */
const BUNDLED: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = {
  // The simulated provider is priced like a mid-size model so the offline demo shows real dollars.
  sim: {
    'sim-small': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
    'sim-large': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  },
  openai: {
    'gpt-4o': { input: 2.5, cachedInput: 1.25, cacheWrite: 2.5, output: 10 },
    'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, cacheWrite: 0.15, output: 0.6 },
    'gpt-4.1': { input: 2, cachedInput: 0.5, cacheWrite: 2, output: 8 },
    'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, cacheWrite: 0.4, output: 1.6 },
    'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, cacheWrite: 0.1, output: 0.4 },
    o3: { input: 2, cachedInput: 0.5, cacheWrite: 2, output: 8 },
    'o4-mini': { input: 1.1, cachedInput: 0.275, cacheWrite: 1.1, output: 4.4 },
    'gpt-5': { input: 1.25, cachedInput: 0.125, cacheWrite: 1.25, output: 10 },
    'gpt-5-mini': { input: 0.25, cachedInput: 0.025, cacheWrite: 0.25, output: 2 },
    'gpt-5-nano': { input: 0.05, cachedInput: 0.005, cacheWrite: 0.05, output: 0.4 },
  },
  anthropic: {
    'claude-opus-4': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
    'claude-opus-4-1': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
    // A third of Opus 4 / 4.1: the snapshot rule below keeps it from inheriting their price.
    'claude-opus-4-5': { input: 5, cachedInput: 0.5, cacheWrite: 6.25, output: 25 },
    'claude-sonnet-4': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
    'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
    'claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, cacheWrite: 1, output: 4 },
    'claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
  },
}

/**
 * What may follow a table key for a model id to inherit its price: a dated snapshot
 * ('-2024-08-06', '-20250929', OpenAI's older '-0613') or '-latest'. Anything else ('-mini',
 * '-pro', '-audio-preview') is a different product with a different price, and guessing it from
 * its prefix would bill 'o3-pro' like 'o3': such ids stay unpriced until someone prices them.
 */
const SNAPSHOT_SUFFIX = /^-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$/

const USD_PER_M = z
  .number({ error: 'expected a number of USD per 1M tokens' })
  .nonnegative({ error: 'must not be negative' })
  // Finer than a micro-dollar per 1M tokens cannot be represented by the integer price math.
  .refine((v) => Math.abs(v * 1e6 - Math.round(v * 1e6)) < 1e-6, {
    error: 'at most 6 decimals',
  })

const OVERRIDE = z
  .object({
    input: USD_PER_M,
    // A custom model often has no cache pricing: default to the plain input price.
    cachedInput: USD_PER_M.optional(),
    cacheWrite: USD_PER_M.optional(),
    output: USD_PER_M,
  })
  .strict()

const KEY_FORMAT = "expected a key 'model' or 'provider/model'"

const OVERRIDES = z.record(
  z
    .string()
    .trim()
    .min(1)
    .regex(/^(?:[^/]+\/)?[^/]+$/, { error: KEY_FORMAT }),
  OVERRIDE,
)

/** Override input: cached and cache-write prices default to the input price. */
export type ModelPriceOverride = z.input<typeof OVERRIDE>

/** Integer micro-dollars per 1M tokens, so cost = Σ price × tokens / 1e6 is exact integer math. */
interface ExactPrice {
  input: bigint
  cachedInput: bigint
  cacheWrite: bigint
  output: bigint
}

interface Entry {
  price: ModelPrice
  exact: ExactPrice
}

// Exact forms of the frozen prices this module hands out, so costMicros need not re-validate them.
const EXACT = new WeakMap<ModelPrice, ExactPrice>()

// Overrides keyed without a provider apply to every provider; kept apart from real families.
const ANY_PROVIDER = '*'

/**
 * The price table in use: the bundled list prices plus the operator's overrides.
 *
 * Override keys are 'provider/model' (e.g. 'openai/gpt-4o', 'my-vllm/llama-3-70b') or a bare model
 * id that applies to every provider. An override is found by the same snapshot-prefix rule as the
 * bundled table and wins over a bundled entry of equal length.
 */
export class Prices {
  #overrides: Map<string, Map<string, Entry>> = new Map()
  #version = PRICE_TABLE_VERSION
  readonly #cache = new Map<string, Entry | null>()

  constructor(overrides?: Record<string, ModelPriceOverride>) {
    if (overrides) this.setOverrides(overrides)
  }

  /** PRICE_TABLE_VERSION, plus a hash of the overrides when any are set (so rows stay auditable). */
  get version(): string {
    return this.#version
  }

  /** Replaces all overrides; throws a TypeError naming the model and field of a bad price. */
  setOverrides(overrides: Record<string, ModelPriceOverride>): void {
    const parsed = OVERRIDES.safeParse(overrides)
    if (!parsed.success) {
      throw new TypeError(describeIssue(parsed.error.issues[0], overrides, 'price override'))
    }
    const next = new Map<string, Map<string, Entry>>()
    const canonical: [string, ModelPrice][] = []
    for (const [key, o] of Object.entries(parsed.data)) {
      const slash = key.indexOf('/')
      const provider = slash < 0 ? ANY_PROVIDER : providerFamily(key.slice(0, slash))
      const model = (slash < 0 ? key : key.slice(slash + 1)).toLowerCase()
      const price: ModelPrice = {
        input: o.input,
        cachedInput: o.cachedInput ?? o.input,
        cacheWrite: o.cacheWrite ?? o.input,
        output: o.output,
      }
      let models = next.get(provider)
      if (!models) next.set(provider, (models = new Map()))
      models.set(model, entry(price))
      canonical.push([`${provider}/${model}`, price])
    }
    this.#overrides = next
    this.#cache.clear()
    canonical.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    this.#version =
      canonical.length === 0
        ? PRICE_TABLE_VERSION
        : `${PRICE_TABLE_VERSION}+overrides.${createHash('sha256')
            .update(JSON.stringify(canonical))
            .digest('hex')
            .slice(0, 8)}`
  }

  /** The price of a provider's model, or null when neither table nor overrides know it. */
  priceFor(provider: string, model: string): ModelPrice | null {
    return this.#lookup(provider, model)?.price ?? null
  }

  /**
   * Cost of one call in integer micro-dollars, rounded once (half up); null when unpriced.
   * Throws a RangeError for a usage that is not normalized (negative, fractional, or more cached
   * and cache-write tokens than input tokens): billing it would invent a number.
   */
  costMicros(usage: Usage, price: ModelPrice | null): number | null {
    assertUsage(usage)
    if (price === null) return null
    const exact = this.#exactOf(price)
    const uncached = usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens
    // BigInt: at $75 per 1M the scaled sum passes 2^53 beyond ~120M tokens (a forecast of a long
    // agent batch gets there); integer math keeps "rounded once at the end" literal.
    const scaled =
      BigInt(uncached) * exact.input +
      BigInt(usage.cachedInputTokens) * exact.cachedInput +
      BigInt(usage.cacheWriteTokens) * exact.cacheWrite +
      BigInt(usage.outputTokens) * exact.output
    return Number((scaled + 500_000n) / 1_000_000n)
  }

  #exactOf(price: ModelPrice): ExactPrice {
    // Prices handed out by priceFor carry their exact form; a caller-built one is checked first.
    const known = EXACT.get(price)
    if (known) return known
    const parsed = OVERRIDE.required().safeParse(price)
    if (!parsed.success) throw new TypeError(describeIssue(parsed.error.issues[0], price, 'price'))
    return entry(parsed.data).exact
  }

  #lookup(provider: string, model: string): Entry | null {
    const family = providerFamily(provider)
    const id = model.trim().toLowerCase()
    const cacheKey = `${family}\u0000${id}`
    const cached = this.#cache.get(cacheKey)
    if (cached !== undefined) return cached
    // Longest matching key wins across both tables, so an override for 'gpt-4o' can never capture
    // 'gpt-4o-mini'; on equal length the override wins (overrides are considered last).
    let found: Entry | null = null
    let foundLength = -1
    const tables: [Map<string, Entry> | undefined, boolean][] = [
      [bundledEntries.get(family), false],
      [this.#overrides.get(ANY_PROVIDER), true],
      [this.#overrides.get(family), true],
    ]
    for (const [models, isOverride] of tables) {
      for (const [key, e] of models ?? []) {
        if (!matchesModel(key, id)) continue
        if (key.length > foundLength || (isOverride && key.length === foundLength)) {
          found = e
          foundLength = key.length
        }
      }
    }
    this.#cache.set(cacheKey, found)
    return found
  }
}

const bundledEntries: Map<string, Map<string, Entry>> = new Map(
  Object.entries(BUNDLED).map(([family, models]) => [
    family,
    new Map(Object.entries(models).map(([model, price]) => [model, entry(price)])),
  ]),
)

/**
 * Price family of a provider id: 'openai', 'openai-compatible' and 'openai:work' all use OpenAI's
 * list; any other id is its own family (priced only through overrides).
 */
export function providerFamily(provider: string): string {
  const p = provider.trim().toLowerCase()
  for (const family of ['openai', 'anthropic', 'sim']) {
    if (p === family || p.startsWith(`${family}-`) || p.startsWith(`${family}:`)) return family
  }
  return p
}

function matchesModel(key: string, id: string): boolean {
  return id === key || (id.startsWith(key) && SNAPSHOT_SUFFIX.test(id.slice(key.length)))
}

function entry(price: ModelPrice): Entry {
  const toExact = (usd: number): bigint => BigInt(Math.round(usd * 1e6))
  const frozen = Object.freeze({ ...price })
  const exact: ExactPrice = {
    input: toExact(price.input),
    cachedInput: toExact(price.cachedInput),
    cacheWrite: toExact(price.cacheWrite),
    output: toExact(price.output),
  }
  EXACT.set(frozen, exact)
  return { price: frozen, exact }
}

/** "price override 'gpt-4o'.input: Too small: expected number to be >=0 (got -1)" */
function describeIssue(issue: z.core.$ZodIssue | undefined, input: unknown, what: string): string {
  if (!issue) return `${what}: invalid`
  const [first, ...rest] = issue.path.map(String)
  const where =
    first === undefined
      ? what
      : what === 'price'
        ? `price.${[first, ...rest].join('.')}`
        : `${what} '${first}'${rest.length ? `.${rest.join('.')}` : ''}`
  let value: unknown = input
  for (const key of issue.path) value = field(value, String(key))
  // Key and unknown-field issues are about the name, already quoted in `where`: no value to show.
  if (issue.code === 'invalid_key') return `${where}: ${KEY_FORMAT}`
  const got = issue.path.length > 0 && issue.code !== 'unrecognized_keys'
  return `${where}: ${issue.message}${got ? ` (got ${typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? 'undefined')})` : ''}`
}

function field(obj: unknown, key: string): unknown {
  return obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)[key] : undefined
}

function assertUsage(usage: Usage): void {
  for (const field of ['inputTokens', 'cachedInputTokens', 'cacheWriteTokens', 'outputTokens']) {
    const v = usage[field as keyof Usage]
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new RangeError(`usage.${field} must be a non-negative integer, got ${String(v)}`)
    }
  }
  if (usage.cachedInputTokens + usage.cacheWriteTokens > usage.inputTokens) {
    throw new RangeError(
      `usage.inputTokens (${usage.inputTokens}) must include cachedInputTokens ` +
        `(${usage.cachedInputTokens}) and cacheWriteTokens (${usage.cacheWriteTokens})`,
    )
  }
}
