// The bundled price table: list prices (standard tier, no batch discount) in USD per 1M tokens,
// each entry dated and sourced. prices.ts resolves model ids against it.
import type { ModelPrice } from './prices'

/** A bundled price, with where and when it was read. */
export interface PriceEntry extends ModelPrice {
  /** The day the price was checked (YYYY-MM-DD). */
  checked: string
  /** The vendor's pricing page. */
  source: string
  /**
   * True: read on the vendor's own page (or its model page) on `checked`. False: carried over
   * from an earlier table, or read on secondary sources only (the vendor page could not be reached
   * from the machine that compiled the table): check it before billing anyone.
   */
  verified: boolean
}

/** Identifies the bundled table; written on every ledger row as `price_version`. */
export const PRICE_TABLE_VERSION = '2026-12-01'

const ANTHROPIC = 'https://platform.claude.com/docs/en/about-claude/pricing'
const OPENAI = 'https://developers.openai.com/api/docs/pricing'
const NONE = 'simulated provider: no vendor'

const CHECKED = '2026-12-01'
// Carried over from the 2026-11-01 table, compiled without network access.
const EARLIER = '2026-11-01'

/** Anthropic's rule: 5-minute cache writes 1.25× input, cache reads 0.1× input. */
function anthropic(input: number, output: number, verified: boolean, checked = CHECKED) {
  const entry: PriceEntry = {
    input,
    cachedInput: round6(input * 0.1),
    cacheWrite: round6(input * 1.25),
    output,
    checked,
    source: ANTHROPIC,
    verified,
  }
  return entry
}

/** OpenAI bills no cache writes (it caches by itself): cacheWrite is the input price. */
function openai(
  input: number,
  cachedInput: number,
  output: number,
  verified: boolean,
  checked = CHECKED,
): PriceEntry {
  return { input, cachedInput, cacheWrite: input, output, checked, source: OPENAI, verified }
}

function round6(usd: number): number {
  return Math.round(usd * 1e6) / 1e6
}

/**
 * Known simplifications, each an understatement the operator can fix with an override:
 * - Anthropic's 1-hour cache writes (2× input) are priced at the 5-minute rate (1.25× input),
 *   the only one Pacer asks for;
 * - long-context premiums (Sonnet 4 / 4.5 above 200k input tokens) and prompt-length tiers
 *   (Haiku 5.5 above 100k) are not modelled: the lower band is listed.
 *
 * Verified on 2026-12-01 (vendor pages, read through a search index of them): Anthropic's
 * pricing page (Fable 5.1, Opus 4.5–5, Opus 4 / 4.1, the Claude 3.x rows) and model pages
 * (Sonnet 4.5, Sonnet 5, Sonnet 5.5, Haiku 4.5, Opus 5.5's input and output). Not verified:
 * every OpenAI entry (OpenAI's page could not be read here; gpt-5.1, gpt-5.2, gpt-5.4, gpt-5-pro
 * and o3-pro agree across several secondary sources), Opus 5.5's and Haiku 5.5's cache rates
 * (Anthropic's multipliers assumed), and the entries carried over from 2026-11-01.
 */
export const BUNDLED: Readonly<Record<string, Readonly<Record<string, PriceEntry>>>> = {
  // The simulated provider is priced like a mid-size model so the offline demo shows real dollars.
  sim: {
    'sim-small': {
      ...{ input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
      ...{ checked: EARLIER, source: NONE, verified: true },
    },
    'sim-large': {
      ...{ input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
      ...{ checked: EARLIER, source: NONE, verified: true },
    },
  },
  openai: {
    'gpt-4o': openai(2.5, 1.25, 10, false, EARLIER),
    // The first gpt-4o snapshot kept its launch price and has no cached-input discount: its own
    // entry, which wins over the snapshot rule that would bill it like 'gpt-4o'.
    'gpt-4o-2024-05-13': openai(5, 5, 15, false),
    'chatgpt-4o-latest': openai(5, 5, 15, false),
    'gpt-4o-mini': openai(0.15, 0.075, 0.6, false, EARLIER),
    'gpt-4.1': openai(2, 0.5, 8, false, EARLIER),
    'gpt-4.1-mini': openai(0.4, 0.1, 1.6, false, EARLIER),
    'gpt-4.1-nano': openai(0.1, 0.025, 0.4, false, EARLIER),
    o3: openai(2, 0.5, 8, false, EARLIER),
    // No cached-input discount is published for the pro models.
    'o3-pro': openai(20, 20, 80, false),
    'o4-mini': openai(1.1, 0.275, 4.4, false, EARLIER),
    'gpt-5': openai(1.25, 0.125, 10, false, EARLIER),
    'gpt-5-mini': openai(0.25, 0.025, 2, false, EARLIER),
    'gpt-5-nano': openai(0.05, 0.005, 0.4, false, EARLIER),
    'gpt-5-pro': openai(15, 15, 120, false),
    'gpt-5.1': openai(1.25, 0.125, 10, false),
    'gpt-5.2': openai(1.75, 0.175, 14, false),
    'gpt-5.4': openai(2.5, 0.25, 15, false),
    'gpt-5.4-mini': openai(0.75, 0.075, 4.5, false),
  },
  anthropic: {
    'claude-3-haiku': {
      ...{ input: 0.25, cachedInput: 0.03, cacheWrite: 0.3, output: 1.25 },
      ...{ checked: CHECKED, source: ANTHROPIC, verified: true },
    },
    'claude-3-opus': anthropic(15, 75, true),
    'claude-3-5-haiku': {
      ...{ input: 0.8, cachedInput: 0.08, cacheWrite: 1, output: 4 },
      ...{ checked: CHECKED, source: ANTHROPIC, verified: true },
    },
    'claude-3-5-sonnet': anthropic(3, 15, true),
    'claude-3-7-sonnet': anthropic(3, 15, true),
    'claude-opus-4': anthropic(15, 75, true),
    'claude-opus-4-1': anthropic(15, 75, true),
    // A third of Opus 4 / 4.1: the snapshot rule keeps it from inheriting their price.
    'claude-opus-4-5': anthropic(5, 25, true),
    'claude-opus-4-6': anthropic(5, 25, true),
    'claude-opus-4-7': anthropic(5, 25, true),
    'claude-opus-4-8': anthropic(5, 25, true),
    'claude-opus-5': anthropic(5, 25, true),
    'claude-opus-5-5': anthropic(4, 20, false),
    'claude-sonnet-4': anthropic(3, 15, true),
    'claude-sonnet-4-5': anthropic(3, 15, true),
    'claude-sonnet-5': anthropic(2, 10, true),
    'claude-sonnet-5-5': anthropic(2, 10, true),
    'claude-haiku-4-5': anthropic(1, 5, true),
    'claude-haiku-5-5': anthropic(0.1, 0.5, false),
    'claude-fable-5-1': {
      ...{ input: 10, cachedInput: 0.25, cacheWrite: 12.5, output: 50 },
      ...{ checked: CHECKED, source: ANTHROPIC, verified: true },
    },
  },
}

/**
 * Ids that name another entry: moving aliases ('-latest', '-chat-latest') and short forms. Listed
 * one by one, never guessed from a suffix: an alias that moves to a snapshot with another price
 * must be moved here too, or it would be billed at the old one.
 */
export const ALIASES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  openai: {
    'gpt-5-chat-latest': 'gpt-5',
    'gpt-5.1-chat-latest': 'gpt-5.1',
    'gpt-5.2-chat-latest': 'gpt-5.2',
  },
  anthropic: {
    'claude-3-5-sonnet-latest': 'claude-3-5-sonnet',
    'claude-3-5-haiku-latest': 'claude-3-5-haiku',
    'claude-3-7-sonnet-latest': 'claude-3-7-sonnet',
    'claude-3-opus-latest': 'claude-3-opus',
    'claude-opus-4-0': 'claude-opus-4',
    'claude-sonnet-4-0': 'claude-sonnet-4',
  },
}
