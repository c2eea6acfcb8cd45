// `--batch-api auto` and `--deadline`: whether a run goes through the vendors' batch APIs (half
// price, answers within 24 h) or live, from the forecast's saving and the time the answers are
// needed by; one line says which and why.
import { existsSync } from 'node:fs'
import { BATCH_RATES, type TaskDefaults } from '../engine'
import { formatFromName } from '../../shared/batch-format'
import { formatUsd } from '../../shared/format'
import { batchEngineOptions } from './batch-api'
import { UsageError, openEngine, openReader } from './common'
import { say } from './terminal-text'

/** The vendors' completion window: a batch's answers are promised within it, not sooner. */
export const BATCH_WINDOW_MS = 24 * 3_600_000

/** `--batch-min-saving`'s default, in USD: below it, the wait is not worth the discount. */
export const DEFAULT_MIN_SAVING_USD = 1

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * `--deadline`: a duration from now (`90m`, `2h`, `1h30m`, `2d`) or an ISO 8601 time
 * (`2026-12-03T09:00Z`); the epoch ms it names. A time in the past is refused.
 */
export function parseDeadline(text: string, now: number): number {
  const t = text.trim()
  if (/^(\d+(\.\d+)?[smhd])+$/.test(t)) {
    let ms = 0
    for (const [, n, unit] of t.matchAll(/(\d+(?:\.\d+)?)([smhd])/g)) {
      ms += Number(n) * UNIT_MS[unit!]!
    }
    if (ms <= 0) throw new UsageError(`--deadline must be after now, got "${text}"`)
    return now + Math.round(ms)
  }
  // A date alone is midnight UTC, as Date.parse reads it; anything else must be a full ISO time.
  const at = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(t)
    ? Date.parse(t)
    : NaN
  if (Number.isNaN(at)) {
    throw new UsageError(
      `--deadline takes a duration (30m, 2h, 1h30m, 2d) or an ISO time (2026-12-03T09:00Z), got "${text}"`,
    )
  }
  if (at <= now) throw new UsageError(`--deadline ${text} has passed`)
  return at
}

/** How long until the deadline, as the lines say it. */
function inWords(ms: number): string {
  const h = ms / 3_600_000
  return h >= 1 ? `${Math.round(h * 10) / 10} h` : `${Math.max(1, Math.round(ms / 60_000))} min`
}

/**
 * Plain `--batch-api` with a deadline inside the completion window is refused, not warned about:
 * the vendors promise answers within 24 h and most batches take minutes, so a run could meet the
 * deadline or miss it by hours, and a warning scrolled past would not stop the second.
 */
export function checkDeadline(deadline: number | null, now: number): void {
  if (deadline === null || deadline - now >= BATCH_WINDOW_MS) return
  throw new UsageError(
    `--deadline is in ${inWords(deadline - now)}, inside the batch APIs' 24 h completion window: ` +
      'their answers may come later; run live (no --batch-api), let --batch-api auto choose, or ' +
      'give a deadline 24 h or more away',
  )
}

export interface RouteInput {
  provider: string
  /** Epoch ms the answers are needed by; null: none given. */
  deadline: number | null
  now: number
  /** The forecast of the work still to run: its cost at the list price; null when unknown. */
  listMicros: number | null
  /** Tasks of the forecast whose model has no price (their cost is not in listMicros). */
  unpricedTasks: number
  minSavingMicros: number
  /** Provider batches of an earlier run on this database that are still at the vendor. */
  openSubmissions: number
}

export interface Route {
  batch: boolean
  reason: string
}

/** The vendor whose batch rate a provider's calls get. */
function rateOf(provider: string): number | null {
  if (provider === 'anthropic') return BATCH_RATES['anthropic']!.rate
  if (provider === 'openai' || provider === 'openai-compatible') return BATCH_RATES['openai']!.rate
  return null
}

/** `--batch-api auto`'s choice and its reason, in the order the reasons win. */
export function chooseRoute(r: RouteInput): Route {
  const rate = rateOf(r.provider)
  if (rate === null) return { batch: false, reason: `${r.provider} has no batch API` }
  // Open batches of an earlier run hold some of these calls: going live would pay for them twice.
  if (r.openSubmissions > 0) {
    return {
      batch: true,
      reason: `${r.openSubmissions} provider batch(es) of an earlier run are still open: their answers are collected, not paid for again live`,
    }
  }
  if (r.deadline !== null && r.deadline - r.now < BATCH_WINDOW_MS) {
    return {
      batch: false,
      reason: `the deadline is in ${inWords(r.deadline - r.now)}, inside the 24 h completion window`,
    }
  }
  if (r.listMicros === null || (r.listMicros === 0 && r.unpricedTasks > 0)) {
    return { batch: false, reason: 'the saving cannot be forecast: the model has no price' }
  }
  const saving = Math.round(r.listMicros * (1 - rate))
  const threshold = formatUsd(r.minSavingMicros)
  const unpriced = r.unpricedTasks > 0 ? ` (${r.unpricedTasks} unpriced task(s) not counted)` : ''
  if (saving > r.minSavingMicros) {
    return {
      batch: true,
      reason: `the forecast saving ${formatUsd(saving)}${unpriced} is above ${threshold} (--batch-min-saving)${r.deadline === null ? ', no --deadline' : ', the deadline is 24 h or more away'}`,
    }
  }
  return {
    batch: false,
    reason: `the forecast saving ${formatUsd(saving)}${unpriced} is not above ${threshold} (--batch-min-saving)`,
  }
}

/** The forecast a choice needs, read from the database without writing to it. */
export async function forecastForRoute(
  path: string,
  dbPath: string,
  defaults: TaskDefaults,
): Promise<{ listMicros: number | null; unpricedTasks: number; openSubmissions: number }> {
  let engine
  try {
    engine = existsSync(dbPath) ? openReader(dbPath) : openEngine({ dbPath: ':memory:' })
  } catch {
    // A database this reader cannot open is the run's own error to report, a moment later.
    engine = openEngine({ dbPath: ':memory:' })
  }
  try {
    const { forecast } = await engine.batches.forecastFile({
      path,
      format: formatFromName(path),
      defaults,
    })
    let openSubmissions = 0
    try {
      openSubmissions = (
        engine.db.prepare('SELECT COUNT(*) AS n FROM provider_batches WHERE ended = 0').get() as {
          n: number
        }
      ).n
    } catch {
      // A database from before provider batches: none open.
    }
    return {
      listMicros: forecast ? forecast.total.costMicros : null,
      unpricedTasks: forecast?.unpricedTasks ?? 0,
      openSubmissions,
    }
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** Whether the latest batch of this file in the database went through the batch APIs. */
async function sentViaBatchApi(path: string, dbPath: string): Promise<boolean> {
  if (!existsSync(dbPath)) return false
  let engine
  try {
    engine = openReader(dbPath)
  } catch {
    // A database this reader cannot open is the run's own error to report, a moment later.
    return false
  }
  try {
    const row = engine.db
      .prepare('SELECT batch_api FROM batches WHERE source = ? ORDER BY created_at DESC LIMIT 1')
      .get(path) as { batch_api: number } | undefined
    return row?.batch_api === 1
  } catch {
    // A database from before batch-API batches: none was.
    return false
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** What `pacer run` was given about the batch path. */
export interface RouteOptions {
  provider: string
  /** `--batch-api`: true, 'auto', or absent (live). */
  batchApi?: boolean | string
  deadline?: string
  /** `--batch-min-saving` in USD. @default DEFAULT_MIN_SAVING_USD */
  batchMinSaving?: number
  json?: boolean
  /** `--retry-failed`: a file whose batch went through the batch API is retried there too. */
  retryFailed?: boolean
}

/**
 * Whether the run goes through the batch APIs: plain `--batch-api` does (a deadline inside the
 * window refused), `auto` chooses and says so on one line, none is live. Before the run's engine
 * opens: its options depend on it.
 */
export async function routeRun(
  opts: RouteOptions,
  path: string,
  dbPath: string,
  defaults: TaskDefaults,
): Promise<boolean> {
  const now = Date.now()
  const deadline = opts.deadline === undefined ? null : parseDeadline(opts.deadline, now)
  if (opts.batchApi === undefined || opts.batchApi === false) {
    if (deadline !== null || opts.batchMinSaving !== undefined) {
      const flag = deadline !== null ? '--deadline' : '--batch-min-saving'
      throw new UsageError(`${flag} goes with --batch-api or --batch-api auto`)
    }
    // Retrying what a batch sent at half price must not send it live at twice that.
    if (opts.retryFailed && (await sentViaBatchApi(path, dbPath))) {
      say.err(
        'pacer: --retry-failed: through the batch API, as this file’s batch was sent (half price, answers within 24 h)\n',
      )
      return true
    }
    return false
  }
  if (opts.batchApi === true) {
    if (opts.batchMinSaving !== undefined) {
      throw new UsageError('--batch-min-saving goes with --batch-api auto')
    }
    checkDeadline(deadline, now)
    return true
  }
  if (opts.batchApi !== 'auto') {
    throw new UsageError(`--batch-api takes no value or "auto", got "${opts.batchApi}"`)
  }
  const minSavingMicros = Math.round((opts.batchMinSaving ?? DEFAULT_MIN_SAVING_USD) * 1e6)
  const forecast = await forecastForRoute(path, dbPath, defaults)
  const route = chooseRoute({
    provider: opts.provider,
    deadline,
    now,
    minSavingMicros,
    ...forecast,
  })
  say.err(
    `pacer: --batch-api auto: ${route.batch ? 'through the batch API (half price, answers within 24 h)' : 'live'}: ${route.reason}\n`,
  )
  return route.batch
}

/** The engine options of the run's route: the batch path's, or null (live). */
export async function batchRoute(
  opts: RouteOptions,
  path: string,
  dbPath: string,
  defaults: TaskDefaults,
): Promise<ReturnType<typeof batchEngineOptions> | null> {
  return (await routeRun(opts, path, dbPath, defaults)) ? batchEngineOptions(opts.provider) : null
}
