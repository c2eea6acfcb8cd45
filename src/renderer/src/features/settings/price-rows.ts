/** Price overrides as edited in a table of text fields, and their validation. */
import type { PriceView } from '../../../../shared/contract'

export const PRICE_FIELDS = ['input', 'cachedInput', 'cacheWrite', 'output'] as const
export type PriceField = (typeof PRICE_FIELDS)[number]

export const PRICE_LABELS: Record<PriceField, string> = {
  input: 'Input',
  cachedInput: 'Cached input',
  cacheWrite: 'Cache write',
  output: 'Output',
}

export interface PriceRow {
  key: number
  model: string
  prices: Record<PriceField, string>
}

export type PriceRowErrors = Partial<Record<'model' | PriceField, string>>

export function rowsFromOverrides(overrides: Record<string, PriceView>): PriceRow[] {
  return Object.entries(overrides).map(([model, p], i) => ({
    key: i,
    model,
    prices: {
      input: String(p.input),
      cachedInput: String(p.cachedInput),
      cacheWrite: String(p.cacheWrite),
      output: String(p.output),
    },
  }))
}

export function emptyPriceRow(key: number): PriceRow {
  return { key, model: '', prices: { input: '', cachedInput: '', cacheWrite: '', output: '' } }
}

/** Validates every row; returns the overrides record only when all rows are valid. */
export function validatePriceRows(rows: readonly PriceRow[]): {
  errors: Map<number, PriceRowErrors>
  overrides: Record<string, PriceView> | null
} {
  const errors = new Map<number, PriceRowErrors>()
  const overrides: Record<string, PriceView> = {}
  const seen = new Set<string>()
  for (const row of rows) {
    const e: PriceRowErrors = {}
    const model = row.model.trim()
    if (!model) e.model = 'Model name required'
    else if (seen.has(model)) e.model = 'Listed twice'
    seen.add(model)
    const price = {} as PriceView
    for (const f of PRICE_FIELDS) {
      const text = row.prices[f].trim()
      const n = Number(text)
      // An empty cache price is the common case (no caching): read it as 0, not an error.
      if (text === '' && (f === 'cachedInput' || f === 'cacheWrite')) price[f] = 0
      else if (text === '' || !Number.isFinite(n)) e[f] = 'Enter a number'
      else if (n < 0) e[f] = 'Cannot be negative'
      else price[f] = n
    }
    if (Object.keys(e).length) errors.set(row.key, e)
    else overrides[model] = price
  }
  return { errors, overrides: errors.size ? null : overrides }
}
