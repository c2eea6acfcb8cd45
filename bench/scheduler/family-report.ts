// The family's part of `npm run bench:scheduler`: every contender on the same drawn providers,
// their distributions in one table, and the targets checked on Pacer's.
import { CONTENDERS, PACER_PAUSING } from './contenders'
import type { FamilySummary } from './family-race'
import { drawFamily, raceFamily, summarize } from './family-race'

/** The targets on the family. */
export const FAMILY_TARGETS = {
  medianUtilization: 0.93,
  p10Utilization: 0.85,
  medianThrottled: 0.01,
  p90Throttled: 0.03,
  medianRegainRtts: 10,
}

const pct = (x: number) => `${(x * 100).toFixed(2)} %`
const num = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : '-')

/** Races every contender (and Pacer pausing on lone refusals) on `count` draws from `seed`. */
export async function runFamily(count: number, seed: number): Promise<FamilySummary[]> {
  const draws = drawFamily(count, seed)
  let done = 0
  const contenders = [...CONTENDERS, PACER_PAUSING]
  const results = await raceFamily(draws, contenders, () => {
    if (++done % 50 === 0) console.error(`  family: ${done} races run`)
  })
  return summarize(results)
}

/** The distributions as a table, one row per contender. */
export function printFamily(rows: FamilySummary[], count: number, seed: number): void {
  console.log(
    `\nfamily: ${count} providers drawn from seed ${seed} (bench/scheduler/family.ts), virtual time`,
  )
  const header = [
    'contender',
    'draws',
    'util med',
    'util p10',
    'util worst',
    'thr med',
    'thr p90',
    'thr worst',
    'regain med',
    'regain p90',
  ]
  const lines = [header]
  for (const r of rows) {
    lines.push([
      r.contender,
      String(r.draws),
      num(r.utilization.median, 3),
      num(r.utilization.p10, 3),
      num(r.utilization.worst, 3),
      pct(r.throttled.median),
      pct(r.throttled.p90),
      pct(r.throttled.worst),
      `${num(r.regainRtts.median, 1)} rtt`,
      `${num(r.regainRtts.p90, 1)} rtt`,
    ])
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] as string).length)))
  for (const line of lines) {
    console.log(
      line.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '),
    )
  }
}

/** Pacer's misses against the targets, one line each. */
export function checkFamily(rows: FamilySummary[]): string[] {
  const t = FAMILY_TARGETS
  const pacer = rows.find((r) => r.contender.startsWith('Pacer (adaptive'))
  if (!pacer) return ['family: Pacer did not run']
  const misses: string[] = []
  const u = pacer.utilization
  const th = pacer.throttled
  if (u.median < t.medianUtilization) misses.push(`median utilization ${num(u.median, 3)}`)
  if (u.p10 < t.p10Utilization) misses.push(`10th percentile utilization ${num(u.p10, 3)}`)
  if (th.median > t.medianThrottled) misses.push(`median throttled ${pct(th.median)}`)
  if (th.p90 > t.p90Throttled) misses.push(`90th percentile throttled ${pct(th.p90)}`)
  if (pacer.regainRtts.median > t.medianRegainRtts) {
    misses.push(`median time to regain ${num(pacer.regainRtts.median, 1)} round trips`)
  }
  for (const r of rows) {
    if (r.contender.startsWith('Pacer') || r.contender.startsWith('oracle')) continue
    if (r.utilization.median > u.median && r.throttled.median < th.median) {
      misses.push(`${r.contender} is better on both medians`)
    }
  }
  return misses.map((m) => `family: Pacer ${m}`)
}
