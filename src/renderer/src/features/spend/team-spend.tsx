import { EmptyState } from '../../components/empty-state'
import { formatInt } from '../../lib/format'
import type { TeamLedgerView } from '../../../../shared/contract'
import { SpendTable } from './spend-table'

/** The team's ledger: every machine's spend per task type, then per task type and machine. */
export function TeamSpend({ team }: { team: TeamLedgerView }) {
  if (team.rows === 0) {
    return (
      <EmptyState title="The team ledger is empty" testId="team-spend-empty">
        <p>
          Every machine that runs with the team store ({team.store}) appends its ledger rows there.
          Run a batch in team mode first.
        </p>
      </EmptyState>
    )
  }
  return (
    <>
      <section className="panel" data-testid="team-spend">
        <div className="panel-head">
          <h2>Team by task type</h2>
          <span className="hint" data-testid="team-spend-hint">
            {formatInt(team.rows)} rows from {team.machines.length} machine(s) on {team.store}
            {team.waiting ? ` · ${formatInt(team.waiting)} of this machine's not there yet` : ''}
          </span>
        </div>
        <SpendTable byType={team.byType} totals={team.totals} testId="team-spend-table" />
      </section>
      <section className="panel">
        <div className="panel-head">
          <h2>By machine</h2>
          <span className="hint">{team.machines.join(', ')}</span>
        </div>
        <SpendTable
          byType={team.byMachine}
          totals={team.totals}
          withMachine
          testId="team-machine-table"
        />
      </section>
    </>
  )
}
