import type { PauseView } from '../../../../shared/contract'

/**
 * The partition's pauses that overlap [fromMs, nowMs], as [start, end] in seconds (uPlot's x),
 * each cut at now: a pause that runs on is shaded up to the present, not into the future.
 */
export function pauseBands(
  pauses: readonly PauseView[],
  partition: string,
  fromMs: number,
  nowMs: number,
): [number, number][] {
  const bands: [number, number][] = []
  for (const p of pauses) {
    if (p.partition !== partition || p.until <= fromMs || p.ts > nowMs) continue
    bands.push([Math.max(p.ts, fromMs) / 1000, Math.min(p.until, nowMs) / 1000])
  }
  return bands.sort((a, b) => a[0] - b[0])
}

/**
 * The partition's pause in force at `atMs` (under the pointer on the chart), the latest to begin
 * when pauses overlap (a longer wait extends one), or undefined.
 */
export function pauseAt(
  pauses: readonly PauseView[],
  partition: string,
  atMs: number,
): PauseView | undefined {
  let found: PauseView | undefined
  for (const p of pauses) {
    if (p.partition !== partition || p.ts > atMs || p.until < atMs) continue
    if (!found || p.ts > found.ts) found = p
  }
  return found
}
