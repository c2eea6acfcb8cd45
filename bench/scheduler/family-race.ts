// Every contender on the same drawn providers, in virtual time: utilization, throttled share and
// time to regain a raised capacity per draw, then their distributions per contender.
import type { Contender, Run } from './contenders'
import { CONTENDERS } from './contenders'
import type { ProviderDraw } from './family'
import { drawProvider, drawTasks, familyProvider } from './family'
import { seededRandom } from '../../test/helpers/random'
import { T0, inVirtualTime } from './virtual-time'

/** One contender on one drawn provider. */
export interface FamilyResult {
  contender: string
  seed: number
  utilization: number
  throttledShare: number
  /** Each rise of a concurrency cap: round trips (median latencies) until 90 % of it was used. */
  regainRtts: number[]
}

/** What a contender reaches on the family: the distributions the report shows. */
export interface FamilySummary {
  contender: string
  draws: number
  utilization: { median: number; p10: number; worst: number }
  throttled: { median: number; p90: number; worst: number }
  regainRtts: { median: number; p90: number; rises: number }
}

function budgetOf(draw: ProviderDraw): Run['budget'] {
  if (draw.headers === 'none' || draw.binding === 'concurrency') return undefined
  const kind = draw.binding === 'requests' ? 'requests' : 'input-tokens'
  return { kind, perMinute: (draw.phases[0] as { value: number }).value }
}

/** Races one contender on one draw. */
export async function raceDraw(draw: ProviderDraw, contender: Contender): Promise<FamilyResult> {
  const tasks = drawTasks(draw)
  const provider = familyProvider(draw)
  let attempts = 0
  let refused = 0
  let answered = 0
  let last = T0
  const run: Run = {
    tasks,
    provider,
    random: seededRandom(draw.seed * 7 + 11),
    budget: budgetOf(draw),
    async call(t) {
      attempts++
      const answer = await provider.call(t)
      if (answer.status === 429 || answer.status === 503 || answer.status === 529) refused++
      else {
        answered++
        last = Math.max(last, Date.now())
      }
      return answer
    },
  }
  await inVirtualTime(() => contender.drive(run))
  if (answered !== tasks.length) {
    throw new Error(`${contender.name} on #${draw.seed}: ${answered} of ${tasks.length} answered`)
  }
  const end = Math.min(T0 + draw.warmupMs + draw.durationMs, last)
  const regainRtts = provider
    .rises()
    .filter((r) => r.at < end)
    .map((r) => (r.regainedMs ?? (r.censoredMs || end - r.at)) / draw.latency.medianMs)
  return {
    contender: contender.name,
    seed: draw.seed,
    utilization: provider.utilization(end),
    throttledShare: attempts > 0 ? refused / attempts : 0,
    regainRtts,
  }
}

/** The draws of a family run: `count` providers from `seed`. */
export function drawFamily(count: number, seed: number): ProviderDraw[] {
  return Array.from({ length: count }, (_, i) => drawProvider(seed * 100_003 + i + 1))
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0
    ? NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number)

/** Distributions per contender over its results. */
export function summarize(results: FamilyResult[]): FamilySummary[] {
  const by = new Map<string, FamilyResult[]>()
  for (const r of results) by.set(r.contender, [...(by.get(r.contender) ?? []), r])
  return [...by].map(([contender, rows]) => {
    const util = rows.map((r) => r.utilization).sort((a, b) => a - b)
    const thr = rows.map((r) => r.throttledShare).sort((a, b) => a - b)
    const regain = rows.flatMap((r) => r.regainRtts).sort((a, b) => a - b)
    return {
      contender,
      draws: rows.length,
      utilization: { median: quantile(util, 0.5), p10: quantile(util, 0.1), worst: util[0] ?? NaN },
      throttled: {
        median: quantile(thr, 0.5),
        p90: quantile(thr, 0.9),
        worst: thr[thr.length - 1] ?? NaN,
      },
      regainRtts: {
        median: quantile(regain, 0.5),
        p90: quantile(regain, 0.9),
        rises: regain.length,
      },
    }
  })
}

/** Every contender that applies on every draw; `onDone` hears of each run as it ends. */
export async function raceFamily(
  draws: ProviderDraw[],
  contenders: Contender[] = CONTENDERS,
  onDone?: (r: FamilyResult) => void,
): Promise<FamilyResult[]> {
  const results: FamilyResult[] = []
  for (const draw of draws) {
    for (const contender of contenders) {
      if (contender.applies && !contender.applies(budgetOf(draw))) continue
      const result = await raceDraw(draw, contender)
      onDone?.(result)
      results.push(result)
    }
  }
  return results
}
