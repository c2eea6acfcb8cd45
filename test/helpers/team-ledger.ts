// Team ledger tests' parts: a database with a seeded random mix of ledger rows (every outcome,
// tasks over several epochs that turn duplicate, unpriced models, lost answers, estimates), and a
// sum of local rollups to hold the team's against.
import type Database from 'better-sqlite3'
import type { TypeRollupView } from '../../src/shared/contract'
import { Ledger } from '../../src/main/engine/ledger/ledger'
import { Prices } from '../../src/main/engine/pricing/prices'
import type { LedgerOutcome } from '../../src/main/engine/core/types'
import { seededRandom } from './random'

const OUTCOMES: LedgerOutcome[] = [
  'executed',
  'executed',
  'executed',
  'executed',
  'duplicate',
  'reused',
  'throttled',
  'error',
  'abandoned',
  'timeout',
  'replayed',
]

/**
 * Appends `n` seeded rows to the database's ledger, from `ts0` on. `tasks` > 0: each row's task
 * is one of the latest `tasks` ids (a real ledger's few rows per task, as in the bench); default:
 * a few tasks with many rows each, many epochs turning duplicate.
 */
export function recordRows(
  db: Database.Database,
  n: number,
  seed: number,
  ts0 = 1_700_000_000_000,
  tasks = 0,
) {
  const ledger = new Ledger({ db, prices: new Prices() })
  const random = seededRandom(seed)
  const viaBatch = seededRandom(seed + 0x5eed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
  for (let i = 0; i < n; i++) {
    const outcome = pick(OUTCOMES)
    const noTokens = outcome === 'reused' || outcome === 'replayed' || outcome === 'throttled'
    const taskId =
      tasks > 0
        ? Math.max(1, i - Math.floor(random() * tasks))
        : pick([1, 2, 3, 4, 5, 6, 7, 8, null])
    ledger.record({
      ts: ts0 + i * 997,
      taskId,
      batchId: pick(['b1', 'b2', null]),
      fp: `fp${taskId ?? pick([-1, -2])}`,
      worker: 'w',
      taskType: pick(['classify', 'translate', 'summarize']),
      provider: 'sim',
      model: pick(['sim-small', 'sim-small', 'sim-large', 'mystery-1']),
      step: 1 + Math.floor(random() * 3),
      usage: {
        inputTokens: noTokens ? 0 : pick([0, 10, 1_000, 2_500]),
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: noTokens ? 0 : pick([0, 7, 100]),
      },
      outcome,
      latencyMs: pick([null, 12]),
      status: pick([null, 200, 429]),
      epoch: pick([1, 2, 3, null]),
      ...(outcome === 'replayed' ? { savedMicros: pick([null, 40]) } : {}),
      ...(outcome === 'duplicate' && random() < 0.3 ? { reason: 'answer lost' } : {}),
      ...(random() < 0.1 ? { estimated: true } : {}),
      // A quarter of the executed calls answered through a provider batch (a vendor's model: the
      // simulator has none), priced at the batch rate with what the discount saved. Drawn apart,
      // so the other rows are the same as without them.
      ...(outcome === 'executed' && viaBatch() < 0.25
        ? { provider: 'openai', model: 'gpt-4o-mini', tier: 'batch' as const }
        : {}),
    })
  }
  void ledger.close()
}

/** The additive fields of rollups (everything but the average), nulls as zeros. */
export function additive(r: TypeRollupView): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(r)) {
    if (k !== 'taskType' && k !== 'avgInputTokens') out[k] = (v as number | null) ?? 0
  }
  return out
}

/** Local rollups summed per task type (additive fields). */
export function sumPerType(
  rollups: readonly TypeRollupView[][],
): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>()
  for (const byType of rollups) {
    for (const r of byType) {
      const a = additive(r)
      const into = out.get(r.taskType)
      if (!into) out.set(r.taskType, a)
      else for (const k of Object.keys(a)) into[k]! += a[k]!
    }
  }
  return out
}
