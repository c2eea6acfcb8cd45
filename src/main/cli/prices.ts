import { microsToUsd } from '../../shared/money'
import { formatUsd, formatUsdPerM } from '../../shared/format'
import type { PriceListing, PriceMatch, Usage } from '../engine'
import { PRICE_TABLE_VERSION, Prices, SettingsStore, openDatabase } from '../engine'
import { UsageError, existingDbPath, table, thousands } from './common'
import { say } from './terminal-text'

export interface PricesOptions {
  db?: string
  provider?: string
  inputTokens?: number
  cachedTokens?: number
  cacheWriteTokens?: number
  outputTokens?: number
  json?: boolean
}

// Tried in this order when no --provider names the model's family.
const FAMILIES = ['openai', 'anthropic', 'sim']

/** `pacer prices [MODEL]`: the price table in use, or what one model's call would cost. */
export async function pricesCommand(
  model: string | undefined,
  opts: PricesOptions,
): Promise<number> {
  const prices = await loadPrices(opts.db)
  if (model === undefined) {
    if (tokenFlags(opts))
      throw new UsageError('token counts need a MODEL: pacer prices MODEL --input-tokens N ...')
    printTable(prices, opts.json === true)
    return 0
  }
  const usage = usageOf(opts)
  const match = find(prices, model, opts.provider)
  const cost = usage && match ? prices.costMicros(usage, match.price) : null
  const cache = usage && match ? prices.cacheEffectMicros(usage, match.price) : null
  if (opts.json) {
    const out = {
      model,
      provider: opts.provider ?? match?.family ?? null,
      priceTableVersion: prices.version,
      match: match ?? null,
      usage,
      costMicros: usage ? cost : undefined,
      costUsd: usage ? microsToUsd(cost) : undefined,
      cacheSavedMicros: cache?.savedMicros,
      cacheWriteExtraMicros: cache?.writeExtraMicros,
    }
    say.out(`${JSON.stringify(out)}\n`)
    return 0
  }
  say.out(describe(model, opts.provider, match, usage, cost, cache))
  return 0
}

async function loadPrices(db: string | undefined): Promise<Prices> {
  if (db === undefined) return new Prices()
  const handle = openDatabase(existingDbPath(db))
  try {
    return new Prices(new SettingsStore(handle).get().priceOverrides)
  } catch (err) {
    throw new UsageError(`the price overrides stored in ${db}: ${(err as Error).message}`)
  } finally {
    handle.close()
  }
}

function tokenFlags(o: PricesOptions): boolean {
  return [o.inputTokens, o.cachedTokens, o.cacheWriteTokens, o.outputTokens].some(
    (v) => v !== undefined,
  )
}

/** The call the flags describe; null without any token flag. Cached and written ⊆ input. */
function usageOf(o: PricesOptions): Usage | null {
  if (!tokenFlags(o)) return null
  const usage: Usage = {
    inputTokens: o.inputTokens ?? 0,
    cachedInputTokens: o.cachedTokens ?? 0,
    cacheWriteTokens: o.cacheWriteTokens ?? 0,
    outputTokens: o.outputTokens ?? 0,
  }
  if (usage.cachedInputTokens + usage.cacheWriteTokens > usage.inputTokens) {
    throw new UsageError(
      `--input-tokens (${usage.inputTokens}) counts every input token, the cached ones ` +
        `(--cached-tokens ${usage.cachedInputTokens}) and cache writes ` +
        `(--cache-write-tokens ${usage.cacheWriteTokens}) included: it must be at least their sum`,
    )
  }
  return usage
}

function find(prices: Prices, model: string, provider: string | undefined): PriceMatch | null {
  if (provider !== undefined) return prices.resolve(provider, model)
  const overrideFamilies = prices.list().flatMap((r) => (r.origin === 'override' ? [r.family] : []))
  for (const family of [...FAMILIES, ...overrideFamilies]) {
    const m = prices.resolve(family === '*' ? 'any' : family, model)
    if (m) return m
  }
  return null
}

const usd = formatUsdPerM

function describe(
  model: string,
  provider: string | undefined,
  m: PriceMatch | null,
  usage: Usage | null,
  cost: number | null,
  cache: { savedMicros: number; writeExtraMicros: number } | null,
): string {
  const who = provider ? `${model} (${provider})` : model
  if (!m) {
    return (
      `${who}: unpriced. No bundled entry, alias or override matches it, so its calls are ` +
      `ledgered with cost unknown (never $0). Price it with an override in Settings ` +
      `(console, Settings > Price overrides).\n`
    )
  }
  const how =
    m.via === 'exact'
      ? `the ${m.origin} entry ${m.key}`
      : m.via === 'alias'
        ? `the ${m.origin} entry ${m.key} (${model} is an alias of it)`
        : `the ${m.origin} entry ${m.key} (${model} is a dated snapshot of it)`
  const provenance =
    m.origin === 'override'
      ? 'an operator override'
      : `checked ${m.checked ?? '?'}${m.verified ? '' : ' (not verified)'} at ${m.source ?? '?'}`
  const p = m.price
  const lines = [
    `${who}: priced by ${how}, ${m.family === '*' ? 'any provider' : m.family}; ${provenance}`,
    `  per 1M tokens: input ${usd(p.input)}, cached input ${usd(p.cachedInput)}, ` +
      `cache write ${usd(p.cacheWrite)}, output ${usd(p.output)}`,
  ]
  if (usage) {
    lines.push(
      `  ${thousands(usage.inputTokens)} input tokens (${thousands(usage.cachedInputTokens)} ` +
        `cached, ${thousands(usage.cacheWriteTokens)} cache writes), ` +
        `${thousands(usage.outputTokens)} output tokens: ${formatUsd(cost)}`,
    )
    const effect = [
      ...(cache && usage.cachedInputTokens > 0
        ? [`cache reads saved ${formatUsd(cache.savedMicros)}`]
        : []),
      ...(cache && usage.cacheWriteTokens > 0
        ? [`cache writes cost ${formatUsd(cache.writeExtraMicros)} above the input price`]
        : []),
    ]
    if (effect.length > 0) lines.push(`  ${effect.join('; ')}`)
  }
  return `${lines.join('\n')}\n`
}

function printTable(prices: Prices, json: boolean): void {
  const rows = prices.list()
  if (json) {
    const aliases = prices.aliases().map(([family, alias, key]) => ({ family, alias, key }))
    say.out(`${JSON.stringify({ priceTableVersion: prices.version, prices: rows, aliases })}\n`)
    return
  }
  const row = (r: PriceListing) => [
    r.family,
    r.key,
    r.price.input,
    r.price.cachedInput,
    r.price.cacheWrite,
    r.price.output,
    r.origin === 'override' ? 'override' : (r.checked ?? ''),
    r.origin === 'override' ? '' : r.verified ? 'yes' : 'no',
    r.source ?? '',
  ]
  say.out(
    `USD per 1M tokens, price table ${prices.version}` +
      `${prices.version === PRICE_TABLE_VERSION ? '' : ' (bundled + overrides)'}\n` +
      `${table(
        [
          'provider',
          'model',
          'input',
          'cached',
          'cache write',
          'output',
          'checked',
          'verified',
          'source',
        ],
        rows.map(row),
      )}\n\naliases: ${prices
        .aliases()
        .map(([, alias, key]) => `${alias} → ${key}`)
        .join(', ')}\n` +
      'A dated snapshot (model-2025-09-29, model-20250929) takes its model’s price unless it has ' +
      'an entry of its own; any other id is unpriced until an override prices it.\n',
  )
}
