import { formatClock, formatDateTime, formatInt } from '../lib/format'
import { useStore } from '../store'

/**
 * Team mode: this machine's ledger rows the team store does not have yet (it is out of reach):
 * the team's figures lack them until it answers. Nothing when none wait.
 */
export function TeamBacklog({ testId }: { testId: string }) {
  const backlog = useStore((s) => s.teamBacklog)
  if (!backlog || backlog.rows <= 0) return null
  const { rows, since } = backlog
  const today = new Date(since).toDateString() === new Date().toDateString()
  return (
    <p className="backlog-banner" role="status" data-testid={testId}>
      {formatInt(rows)} ledger {rows === 1 ? 'row' : 'rows'} of this machine not yet in the team
      store (Redis unreachable since {today ? formatClock(since) : formatDateTime(since)})
    </p>
  )
}
