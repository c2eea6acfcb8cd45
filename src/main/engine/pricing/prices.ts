import { createHash } from 'node:crypto'
import { z } from 'zod'
import { ALIASES, BUNDLED, PRICE_TABLE_VERSION, type PriceEntry } from './prices-table'
import type { Usage } from '../core/types'
import { atRate, BATCH_RATES, type BatchRate } from './batch-rates'

export { PRICE_TABLE_VERSION }

/** USD per 1M tokens. Usage × price is micro-dollars exactly, so no unit conversion hides here. */
export interface ModelPrice {
  input: number
  /** Input tokens read from a prompt cache. */
  cachedInput: number
  /** Input tokens written to a prompt cache (Anthropic bills these above the input price). */
  cacheWrite: number
  output: number
}

/**
 * What may follow a table key for a model id to inherit its price: a dated snapshot
 * ('-2024-08-06', '-20250929', OpenAI's older '-0613'). Anything else ('-mini', '-pro',
 * '-audio-preview', '-latest') is another product or a moving alias, and guessing its price from
 * its prefix would bill 'o3-pro' like 'o3': such ids stay unpriced until an entry, an alias
 * (prices-table.ts ALIASES) or an override prices them. A snapshot with a price of its own
 * ('gpt-4o-2024-05-13') has its own entry, which wins as the longer key.
 */
const SNAPSHOT_SUFFIX = /^-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/

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
  /** Where a bundled price was read; null for an override. */
  meta: PriceEntry | null
}

/** Which entry of the table in use priced a model id, and how it was found. */
export interface PriceMatch {
  /** The entry's model key: 'gpt-4o' for 'gpt-4o-2024-08-06'. */
  key: string
  /** Its price family ('openai'), or '*' for an override keyed without a provider. */
  family: string
  /** exact: the id is the key; snapshot: a dated snapshot of it; alias: ALIASES names it. */
  via: 'exact' | 'snapshot' | 'alias'
  origin: 'bundled' | 'override'
  price: ModelPrice
  /** When and where a bundled price was checked; null for an override. */
  checked: string | null
  source: string | null
  verified: boolean | null
}

/** One entry of the table in use, as `pacer prices` lists it. */
export type PriceListing = Omit<PriceMatch, 'via'>

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
  readonly #cache = new Map<string, PriceMatch | null>()
  readonly #batchPrices = new WeakMap<ModelPrice, ModelPrice>()

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
      models.set(model, entry(price, null))
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
    return this.resolve(provider, model)?.price ?? null
  }

  /**
   * The price of a call answered through the provider's batch API: the list price × the family's
   * batch rate (batch-rates.ts); null when the model is unpriced or the family sells no batches.
   */
  batchPriceFor(provider: string, model: string): ModelPrice | null {
    const list = this.priceFor(provider, model)
    const rate = batchRateOf(provider)
    if (list === null || rate === null) return null
    let price = this.#batchPrices.get(list)
    if (!price) this.#batchPrices.set(list, (price = atRate(list, rate.rate)))
    return price
  }

  /**
   * Which entry prices a provider's model, and how it was found; null when none does (the model
   * is unpriced). An exact key wins, then an alias, then the longest key the id is a dated
   * snapshot of.
   */
  resolve(provider: string, model: string): PriceMatch | null {
    const family = providerFamily(provider)
    const id = model.trim().toLowerCase()
    const cacheKey = `${family}\u0000${id}`
    const cached = this.#cache.get(cacheKey)
    if (cached !== undefined) return cached
    let found = this.#match(family, id)
    if (found?.via !== 'exact') {
      const target = ALIASES[family]?.[id]
      const aliased = target === undefined ? null : this.#match(family, target)
      if (aliased) found = { ...aliased, via: 'alias' }
    }
    this.#cache.set(cacheKey, found)
    return found
  }

  /** Every entry of the table in use: the bundled ones, then the overrides, each by key. */
  list(): PriceListing[] {
    const rows: PriceListing[] = []
    const add = (family: string, models: Map<string, Entry>, origin: PriceListing['origin']) => {
      for (const [key, e] of [...models].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
        rows.push(listing(family, key, e, origin))
      }
    }
    for (const [family, models] of bundledEntries) add(family, models, 'bundled')
    for (const [family, models] of this.#overrides) add(family, models, 'override')
    return rows
  }

  /** The aliases the bundled table resolves: [family, alias, the key it names]. */
  aliases(): [family: string, alias: string, key: string][] {
    return Object.entries(ALIASES).flatMap(([family, map]) =>
      Object.entries(map).map(([alias, key]): [string, string, string] => [family, alias, key]),
    )
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

  /**
   * What a call's prompt caching did to its cost, in integer micro-dollars against the same tokens
   * at the plain input price: cache reads saved `savedMicros`, cache writes cost `writeExtraMicros`
   * more (each rounded once, half away from zero); null when unpriced.
   */
  cacheEffectMicros(
    usage: Usage,
    price: ModelPrice | null,
  ): { savedMicros: number; writeExtraMicros: number } | null {
    assertUsage(usage)
    if (price === null) return null
    const exact = this.#exactOf(price)
    return {
      savedMicros: roundMicros(BigInt(usage.cachedInputTokens) * (exact.input - exact.cachedInput)),
      writeExtraMicros: roundMicros(
        BigInt(usage.cacheWriteTokens) * (exact.cacheWrite - exact.input),
      ),
    }
  }

  #exactOf(price: ModelPrice): ExactPrice {
    // Prices handed out by priceFor carry their exact form; a caller-built one is checked first.
    const known = EXACT.get(price)
    if (known) return known
    const parsed = OVERRIDE.required().safeParse(price)
    if (!parsed.success) throw new TypeError(describeIssue(parsed.error.issues[0], price, 'price'))
    return entry(parsed.data, null).exact
  }

  #match(family: string, id: string): PriceMatch | null {
    // Longest matching key wins across both tables, so an override for 'gpt-4o' can never capture
    // 'gpt-4o-mini'; on equal length the override wins (overrides are considered last).
    let found: PriceMatch | null = null
    const tables: [string, Map<string, Entry> | undefined, PriceMatch['origin']][] = [
      [family, bundledEntries.get(family), 'bundled'],
      [ANY_PROVIDER, this.#overrides.get(ANY_PROVIDER), 'override'],
      [family, this.#overrides.get(family), 'override'],
    ]
    for (const [tableFamily, models, origin] of tables) {
      for (const [key, e] of models ?? []) {
        if (!matchesModel(key, id)) continue
        const longer = found === null || key.length > found.key.length
        if (longer || (origin === 'override' && key.length === found?.key.length)) {
          found = {
            ...listing(tableFamily, key, e, origin),
            via: key === id ? 'exact' : 'snapshot',
          }
        }
      }
    }
    return found
  }
}

function listing(family: string, key: string, e: Entry, origin: PriceMatch['origin']) {
  return {
    key,
    family,
    origin,
    price: e.price,
    checked: e.meta?.checked ?? null,
    source: e.meta?.source ?? null,
    verified: e.meta?.verified ?? null,
  }
}

const bundledEntries: Map<string, Map<string, Entry>> = new Map(
  Object.entries(BUNDLED).map(([family, models]) => [
    family,
    new Map(Object.entries(models).map(([model, e]) => [model, entry(e, e)])),
  ]),
)

/** The batch rate of a provider's family (batch-rates.ts), or null when it sells none. */
export function batchRateOf(provider: string): BatchRate | null {
  return BATCH_RATES[providerFamily(provider)] ?? null
}

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

function entry(price: ModelPrice, meta: PriceEntry | null): Entry {
  const toExact = (usd: number): bigint => BigInt(Math.round(usd * 1e6))
  const { input, cachedInput, cacheWrite, output } = price
  const frozen = Object.freeze({ input, cachedInput, cacheWrite, output })
  const exact: ExactPrice = {
    input: toExact(price.input),
    cachedInput: toExact(price.cachedInput),
    cacheWrite: toExact(price.cacheWrite),
    output: toExact(price.output),
  }
  EXACT.set(frozen, exact)
  return { price: frozen, exact, meta }
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

/** Micro-dollars × 1e6 to micro-dollars, half away from zero (an override may make it negative). */
function roundMicros(scaled: bigint): number {
  const half = scaled < 0n ? -500_000n : 500_000n
  return Number((scaled + half) / 1_000_000n)
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
