import type { PaceInfoView, PauseView } from '../../../../shared/contract'
import {
  formatClock,
  formatDuration,
  formatInt,
  formatNumber,
  formatTokens,
} from '../../lib/format'

type Dimension = keyof PaceInfoView['perMinute']

/** Requests first: the dimension most providers announce, then tokens as they split them. */
const DIMENSIONS: readonly [Dimension, string][] = [
  ['requests', 'requests'],
  ['tokens', 'tokens'],
  ['input-tokens', 'input tokens'],
  ['output-tokens', 'output tokens'],
]

/** The engine's pace keeps the announced minute as its burst until refusals say otherwise. */
const ANNOUNCED_MINUTE_MS = 60_000

/**
 * One line for a paced partition: the rate that is ours per dimension, and the burst the pace
 * allows ("Paced at 588 requests/min · bursts of the announced minute").
 */
export function paceLine(pace: PaceInfoView): string {
  const rates = DIMENSIONS.flatMap(([dim, label]) => {
    const perMinute = pace.perMinute[dim]
    return perMinute === undefined ? [] : [`${formatRate(dim, perMinute)} ${label}/min`]
  })
  if (pace.learned) {
    return `Paced at ${rates.join(', ')} · learned from refusals at one call in flight (no budget announced)`
  }
  const rate = rates.length > 0 ? `Paced at ${rates.join(', ')}` : 'Paced by the announced budget'
  return `${rate} · ${burstText(pace.burstMs)}`
}

function formatRate(dim: Dimension, perMinute: number): string {
  // A fraction is noise on a rate of hundreds; on a rate of a few a minute it is a real share.
  if (perMinute < 10) return formatNumber(perMinute, 1)
  return dim === 'requests' ? formatInt(perMinute) : formatTokens(perMinute)
}

function burstText(burstMs: number): string {
  if (burstMs <= 0) return 'one call at a time (learned)'
  if (burstMs >= ANNOUNCED_MINUTE_MS) return 'bursts of the announced minute'
  return `bursts of at most ${formatDuration(burstMs)} (learned: the provider refused inside a minute)`
}

const PAUSE_REASON = /^paused until \S+(?:\s+\((.+)\))?$/s

/**
 * Why a pause happened, without the "paused until <ISO time>" the view already shows as a clock:
 * "429 said wait 1000 ms: the announced budget is empty". Null when the reason says no more than
 * the time (a pause found under way at load); a reason in another form is kept whole.
 */
export function pauseWhy(reason: string | undefined): string | null {
  if (!reason) return null
  const match = PAUSE_REASON.exec(reason.trim())
  if (!match) return reason
  return match[1] ?? null
}

/** A pause as the partition's list shows it. */
export interface PauseLine {
  key: string
  /** When it began, on the view's clock. */
  time: string
  /** How long nothing was admitted. */
  length: string
  why: string | null
}

/** The partition's last `count` pauses, newest first (the store keeps them newest first). */
export function recentPauses(
  pauses: readonly PauseView[],
  partition: string,
  count: number,
): PauseLine[] {
  return pauses
    .filter((p) => p.partition === partition)
    .slice(0, count)
    .map((p) => ({
      key: `${p.ts}-${p.until}`,
      time: formatClock(p.ts),
      length: formatDuration(Math.max(0, p.until - p.ts)),
      why: pauseWhy(p.reason),
    }))
}

/** The tooltip of a shaded band: when, how long, and why. */
export function pauseTitle(pause: PauseView): string {
  const why = pauseWhy(pause.reason)
  const span = `Paused ${formatClock(pause.ts)}–${formatClock(pause.until)}`
  const length = formatDuration(Math.max(0, pause.until - pause.ts))
  return `${span} (${length})${why ? `: ${why}` : ''}`
}
