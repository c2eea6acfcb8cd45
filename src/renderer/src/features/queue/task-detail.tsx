import { useEffect, useState } from 'react'
import type {
  CommandError,
  ResultsFormat,
  TaskAnswerView,
  TaskLedgerRowView,
} from '../../../../shared/contract'
import { formatUsd } from '../../../../shared/money'
import { InlineError } from '../../components/inline-error'
import { StatusBadge } from '../../components/status-badge'
import { formatDateTime, formatInt } from '../../lib/format'
import { useStore } from '../../store'

/** The drawer a row of the task table opens: the task's answer, error and ledger rows. */
export function TaskDetail() {
  const taskId = useStore((s) => s.openTaskId)
  const detail = useStore((s) => s.taskDetail)
  const error = useStore((s) => s.taskDetailError)
  const close = useStore((s) => s.closeTask)

  useEffect(() => {
    if (taskId === null) return
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [taskId, close])

  if (taskId === null) return null
  const answer = detail?.answer
  return (
    <aside className="task-detail" aria-label={`Task ${taskId}`} data-testid="task-detail">
      <div className="panel-head">
        <h2>
          Task {taskId}
          {answer ? (
            <span className="muted">
              {' '}
              · line {answer.line} · {answer.type}
            </span>
          ) : null}
        </h2>
        {answer ? <StatusBadge status={answer.status} /> : null}
        <button
          type="button"
          className="button small"
          onClick={close}
          data-testid="task-detail-close"
        >
          Close
        </button>
      </div>
      <InlineError error={error} testId="task-detail-error" />
      {answer ? (
        <AnswerSection answer={answer} />
      ) : error ? null : (
        <p className="muted">Loading…</p>
      )}
      {detail ? <LedgerRows rows={detail.ledger} /> : null}
      {answer ? <ResultsDownload batchId={answer.batchId} /> : null}
    </aside>
  )
}

function AnswerSection({ answer }: { answer: TaskAnswerView }) {
  const spent =
    answer.origin === 'reused'
      ? `reused: cost $0, saved ${formatUsd(answer.savedMicros)}`
      : answer.origin === 'executed'
        ? `${formatInt(answer.inputTokens)} in / ${formatInt(answer.outputTokens)} out tokens, ${formatUsd(answer.costMicros)}`
        : null
  return (
    <section className="task-detail-answer">
      <dl className="task-detail-facts">
        <dt>Finish reason</dt>
        <dd data-testid="task-detail-finish">
          {answer.finishReason ?? '—'}
          {answer.truncated ? (
            <span className="badge badge-truncated" data-testid="task-detail-truncated">
              truncated
            </span>
          ) : null}
        </dd>
        {spent ? (
          <>
            <dt>Spent</dt>
            <dd>{spent}</dd>
          </>
        ) : null}
        {answer.key ? (
          <>
            <dt>Key</dt>
            <dd className="mono">{answer.key}</dd>
          </>
        ) : null}
      </dl>
      {answer.error ? (
        <p className="cell-error" data-testid="task-detail-task-error">
          {answer.error}
        </p>
      ) : null}
      {answer.text !== null ? (
        <pre className="task-detail-text" data-testid="task-detail-answer">
          {answer.text}
        </pre>
      ) : (
        <p className="muted">No answer yet.</p>
      )}
    </section>
  )
}

function LedgerRows({ rows }: { rows: TaskLedgerRowView[] }) {
  if (rows.length === 0) return <p className="muted">No ledger rows for this task.</p>
  return (
    <table className="task-detail-ledger" data-testid="task-detail-ledger">
      <thead>
        <tr>
          <th>Time</th>
          <th>Step</th>
          <th>Outcome</th>
          <th>In</th>
          <th>Out</th>
          <th>Cost</th>
          <th>Status</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id} data-testid="task-detail-ledger-row">
            <td>{formatDateTime(r.ts)}</td>
            <td>{r.step}</td>
            <td>{r.outcome}</td>
            <td>{formatInt(r.inputTokens)}</td>
            <td>{formatInt(r.outputTokens)}</td>
            <td>
              {r.outcome === 'reused'
                ? `saved ${formatUsd(r.savedMicros)}`
                : formatUsd(r.costMicros)}
            </td>
            <td>{r.status ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** The batch's answers, as `pacer results` writes them: a download, or the desktop's save dialog. */
function ResultsDownload({ batchId }: { batchId: string }) {
  const exportResults = useStore((s) => s.exportResults)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<CommandError | null>(null)
  const run = async (format: ResultsFormat) => {
    setBusy(true)
    setError(null)
    const reply = await exportResults(batchId, format)
    setBusy(false)
    if (!reply.ok) setError(reply.error)
  }
  return (
    <div className="toolbar task-detail-export">
      <span className="muted">This batch's answers:</span>
      {(['jsonl', 'csv'] as const).map((format) => (
        <button
          key={format}
          type="button"
          className="button small"
          disabled={busy}
          onClick={() => void run(format)}
          data-testid={`results-export-${format}`}
        >
          Download {format.toUpperCase()}
        </button>
      ))}
      <InlineError error={error} testId="results-export-error" />
    </div>
  )
}
