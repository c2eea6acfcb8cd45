import { useState } from 'react'
import { useStore } from '../../store'

/**
 * The import's per-run spend cap, as `pacer run --budget USD`: no call is sent whose worst case
 * would take the batch past it, and what does not fit is held by budget (raise it from the
 * Budgets section or a rerun). A valid amount is weighed in the forecast's cap lines; one that
 * is not a positive dollar amount is named under the field and blocks Queue.
 */
export function BudgetField() {
  const draft = useStore((s) => s.importDraft)
  const setBudget = useStore((s) => s.setImportBudget)
  const [text, setText] = useState(draft?.budgetUsd === undefined ? '' : String(draft.budgetUsd))
  if (!draft) return null

  return (
    <div className="budget-field">
      <div className="form-row">
        <label className="field">
          <span>Budget for this run, USD (optional)</span>
          <input
            value={text}
            inputMode="decimal"
            placeholder="no cap"
            spellCheck={false}
            aria-invalid={draft.budgetError !== undefined}
            onChange={(e) => setText(e.target.value)}
            onBlur={() => setBudget(text)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') setBudget(text)
            }}
            data-testid="import-budget"
          />
        </label>
      </div>
      {draft.budgetError !== undefined ? (
        <p className="hint hint-bad" role="alert" data-testid="import-budget-error">
          {draft.budgetError}
        </p>
      ) : null}
    </div>
  )
}
