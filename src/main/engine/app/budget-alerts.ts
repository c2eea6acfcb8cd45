// The warning thresholds of the kept spend caps (50, 80, 100 %), said once per cap and period by
// the process whose ledger row crossed them: a warning line (the CLI prints it, the console's
// Budgets section shows the threshold), and a POST to $PACER_BUDGET_WEBHOOK when it is set. The
// URL is the process's environment's, never stored: a chat webhook's URL is its credential.
import { microsToUsd } from '../../../shared/money'
import type { SpendBudget } from '../pacing/spend-budget'
import { alertLine, scopeText, type CapAlert } from '../pacing/spend-caps'

/** The environment variable that names the webhook. */
export const BUDGET_WEBHOOK_ENV = 'PACER_BUDGET_WEBHOOK'

/** How long one webhook POST may take; a slow receiver never holds a run up past it. */
const WEBHOOK_TIMEOUT_MS = 5000

/** The JSON a webhook receives: `text` for chat tools, the fields for everything else. */
export function alertPayload(a: CapAlert) {
  return {
    text: `pacer ${alertLine(a)}`,
    capId: a.cap.id,
    scope: scopeText(a.cap),
    taskType: a.cap.taskType,
    provider: a.cap.provider,
    model: a.cap.model,
    period: a.cap.period,
    zone: a.cap.zone,
    periodKey: a.periodKey,
    percent: a.percent,
    capUsd: microsToUsd(a.cap.capMicros),
    spentUsd: microsToUsd(a.spentMicros),
    at: a.at,
  }
}

/** Wires the budget's thresholds to warnings and the webhook; `drain` waits for posts in flight. */
export function watchBudgetAlerts(
  budget: Pick<SpendBudget, 'onAlert'>,
  warn: (message: string) => void,
  webhook: string | undefined = process.env[BUDGET_WEBHOOK_ENV],
): { drain(): Promise<void>; stop(): void } {
  const pending = new Set<Promise<void>>()
  const url = webhook?.trim() || undefined
  const stop = budget.onAlert((a) => {
    warn(alertLine(a))
    if (!url) return
    const post = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alertPayload(a)),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    })
      .then((res) => {
        if (!res.ok) warn(`budget webhook (${BUDGET_WEBHOOK_ENV}) answered HTTP ${res.status}`)
      })
      .catch((err: unknown) => {
        // Never the URL: it may carry the receiver's token.
        warn(`budget webhook (${BUDGET_WEBHOOK_ENV}) failed: ${(err as Error).message}`)
      })
      .finally(() => pending.delete(post))
    pending.add(post)
  })
  return {
    drain: async () => {
      await Promise.allSettled([...pending])
    },
    stop,
  }
}
