import type { CommandHandlers } from '../../../../shared/contract'
import { EngineError } from '../../core/errors'
import type { BatchLifecycle } from '../batch-lifecycle'
import { parseCapInput, type Budgets } from '../budgets'
import type { EngineParts } from '../parts'

type BudgetHandlers = Pick<CommandHandlers, 'budgets:list' | 'budgets:set' | 'budgets:remove'>

/** What the runner writes as a held batch's stop reason (spend-budget.ts, spend-caps.ts). */
const HELD = 'held by budget:'

/**
 * The kept spend caps (console Budgets section, `pacer budgets`). A change may let work through:
 * the batches a cap held (paused by the runner with the reason) resume; a call that still does
 * not fit holds them again, and nothing already paid is sent again.
 */
export function budgetHandlers(
  { db }: EngineParts,
  budgets: Budgets,
  batches: BatchLifecycle,
): BudgetHandlers {
  const held = db.prepare<[], { id: string }>(
    `SELECT id FROM batches WHERE state = 'paused' AND stop_reason LIKE '${HELD}%' ORDER BY key`,
  )
  const resumeHeld = () => {
    const ids = held.all().map((b) => b.id)
    return ids.filter((id) => batches.resume(id, { driver: null, fromPaused: true }))
  }
  return {
    'budgets:list': () => budgets.caps(),
    'budgets:set': (input) => {
      let parsed
      try {
        parsed = parseCapInput(input)
      } catch (err) {
        throw EngineError.from(err, 'zone')
      }
      const id = budgets.setCap(parsed)
      const resumed = resumeHeld()
      return { caps: budgets.caps(), id, resumed }
    },
    'budgets:remove': ({ id }) => {
      const removed = budgets.removeCap(id)
      if (!removed) throw new EngineError('not_found', `id: no spend cap ${id}`, 'id')
      return { caps: budgets.caps(), removed, resumed: resumeHeld() }
    },
  }
}
