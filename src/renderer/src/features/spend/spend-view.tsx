import { useState } from 'react'
import type { CommandError } from '../../../../shared/contract'
import { EmptyState } from '../../components/empty-state'
import { InlineError } from '../../components/inline-error'
import { Segmented } from '../../components/segmented'
import { TeamBacklog } from '../../components/team-backlog'
import { formatInt } from '../../lib/format'
import { useStore } from '../../store'
import { SPEND_RANGES } from '../../store/spend-slice'
import { BudgetsPanel } from './budgets-panel'
import { CostChart } from './cost-chart'
import { SpendTable } from './spend-table'
import { TeamSpend } from './team-spend'

export function SpendView() {
  const error = useStore((s) => s.spendError)
  const loading = useStore((s) => s.spendLoading)
  const teamStore = useStore((s) => s.settings?.teamStore.active ?? null)
  const scope = useStore((s) => (teamStore ? s.spendScope : 'machine'))
  const team = useStore((s) => s.teamLedger)
  const refresh = useStore((s) => s.refreshSpend)

  return (
    <div className="view spend-view">
      <div className="toolbar">
        {teamStore ? <ScopeToggle /> : null}
        {scope === 'team' ? (
          <button
            type="button"
            className="button"
            onClick={() => void refresh()}
            data-testid="team-refresh"
          >
            Refresh
          </button>
        ) : (
          <RangeButtons />
        )}
        {loading ? <span className="hint">Refreshing…</span> : null}
        <span className="spacer" />
        <ExportButtons />
      </div>
      <InlineError error={error} testId="spend-error" />
      {scope === 'team' ? <TeamBacklog testId="spend-team-backlog" /> : null}

      {scope === 'team' ? team ? <TeamSpend team={team} /> : null : <MachineSpend />}
    </div>
  )
}

/** This machine's ledger over the chosen range: per task type, and cost over time. */
function MachineSpend() {
  const rollup = useStore((s) => s.rollup)
  const points = useStore((s) => s.costOverTime)
  const since = useStore((s) => s.spendSince)
  const rangeId = useStore((s) => s.spendRange)
  const setRange = useStore((s) => s.setSpendRange)
  const setView = useStore((s) => s.setView)
  const range = SPEND_RANGES.find((r) => r.id === rangeId) ?? SPEND_RANGES[1]!
  return (
    <>
      <BudgetsPanel />
      {rollup && rollup.totals.runs === 0 && rollup.byType.length === 0 ? (
        <EmptyState title="No spend in this range" testId="spend-empty">
          <p>
            Every provider call lands on the ledger with its tokens and price. Run a batch, or pick
            a longer range.
          </p>
          <div className="form-actions">
            <button type="button" className="button primary" onClick={() => setView('queue')}>
              Queue a batch
            </button>
            {rangeId === 'all' ? null : (
              <button
                type="button"
                className="button ghost"
                onClick={() => setRange('all')}
                data-testid="spend-empty-all"
              >
                Show all time
              </button>
            )}
          </div>
        </EmptyState>
      ) : null}

      {rollup && rollup.byType.length > 0 ? (
        <>
          <section className="panel">
            <div className="panel-head">
              <h2>By task type</h2>
              <span className="hint">
                {formatInt(rollup.totals.executed)} executed · {formatInt(rollup.totals.reused)}{' '}
                reused by dedup · {formatInt(rollup.totals.throttled)} throttled ·{' '}
                {formatInt(rollup.totals.errors)} errors
              </span>
            </div>
            <SpendTable byType={rollup.byType} totals={rollup.totals} />
          </section>
          <section className="panel">
            <div className="panel-head">
              <h2>Cost over time</h2>
              <span className="hint">per {bucketLabel(range.bucketMs)}</span>
            </div>
            <CostChart points={points} since={since} bucketMs={range.bucketMs} />
          </section>
        </>
      ) : null}
    </>
  )
}

function RangeButtons() {
  const rangeId = useStore((s) => s.spendRange)
  const setRange = useStore((s) => s.setSpendRange)
  return (
    <Segmented
      options={SPEND_RANGES}
      value={rangeId}
      onChange={setRange}
      label="Time range"
      testId="spend-range"
      optionTestId={(id) => `range-${id}`}
    />
  )
}

const SCOPES = [
  { id: 'machine', label: 'This machine' },
  { id: 'team', label: 'Team' },
] as const

/** This machine's ledger, or the team store's: shown when a team store is active. */
function ScopeToggle() {
  const scope = useStore((s) => s.spendScope)
  const setScope = useStore((s) => s.setSpendScope)
  return (
    <Segmented
      options={SCOPES}
      value={scope}
      onChange={setScope}
      label="Whose ledger"
      testId="spend-scope"
      optionTestId={(id) => `scope-${id}`}
    />
  )
}

function bucketLabel(ms: number): string {
  if (ms < 60_000) return `${ms / 1000} s`
  if (ms < 3_600_000) return `${ms / 60_000} min`
  return `${ms / 3_600_000} h`
}

function ExportButtons() {
  const exportLedger = useStore((s) => s.exportLedger)
  const transport = useStore((s) => s.transport)
  const [busy, setBusy] = useState<'events' | 'summary' | null>(null)
  const [error, setError] = useState<CommandError | null>(null)
  const [done, setDone] = useState<string | null>(null)

  const run = async (kind: 'events' | 'summary'): Promise<void> => {
    setBusy(kind)
    setError(null)
    setDone(null)
    const reply = await exportLedger(kind)
    setBusy(null)
    if (!reply.ok) {
      setError(reply.error)
      return
    }
    const { path, rows } = reply.value
    // Over IPC a null path means the save dialog was dismissed; over HTTP the browser downloads
    // the file and the row count is not known to the page (-1).
    setDone(
      path
        ? `Saved ${formatInt(rows)} rows to ${path}`
        : transport === 'ipc'
          ? 'Export cancelled'
          : rows >= 0
            ? `Downloaded ${formatInt(rows)} rows`
            : 'Download started',
    )
  }

  return (
    <div className="export">
      <button
        type="button"
        className="button"
        disabled={busy !== null}
        onClick={() => void run('events')}
        data-testid="export-events"
      >
        {busy === 'events' ? 'Exporting…' : 'Export events CSV'}
      </button>
      <button
        type="button"
        className="button"
        disabled={busy !== null}
        onClick={() => void run('summary')}
        data-testid="export-summary"
      >
        {busy === 'summary' ? 'Exporting…' : 'Export summary CSV'}
      </button>
      {done ? (
        <span className="hint-ok" data-testid="export-result">
          {done}
        </span>
      ) : null}
      <InlineError error={error} testId="export-error" />
    </div>
  )
}
