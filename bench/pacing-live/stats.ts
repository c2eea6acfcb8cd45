// The live leg's two ways of comparing a live figure with its virtual twin over the draws: the
// difference of the medians, and the mean of the draws' differences (each draw against itself)
// with its standard error.

/** The median of `xs` (NaN for none). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/**
 * The mean of paired differences `live[i] - twin[i]` over the pairs where both are finite, and its
 * standard error (NaN with fewer than two pairs: one pair says nothing of the spread).
 */
export function pairedMean(
  live: readonly number[],
  twin: readonly number[],
): { mean: number; se: number; n: number } {
  const ds = live.map((x, i) => x - (twin[i] ?? NaN)).filter(Number.isFinite)
  const n = ds.length
  const mean = n === 0 ? NaN : ds.reduce((a, d) => a + d, 0) / n
  if (n < 2) return { mean, se: NaN, n }
  const variance = ds.reduce((a, d) => a + (d - mean) ** 2, 0) / (n - 1)
  return { mean, se: Math.sqrt(variance / n), n }
}
