import { useEffect, useState } from 'react'
import type {
  CommandError,
  ResultsFormat,
  TaskAnswerView,
  TaskLedgerRowView,
  TaskLogLineView,
} from '../../../../shared/contract'
import { formatUsd } from '../../../../shared/format'
import { CopyButton } from '../../components/copy-button'
import { InlineError } from '../../components/inline-error'
import { StatusBadge } from '../../components/status-badge'
import { formatDateTime, formatInt } from '../../lib/format'
import { useStore } from '../../store'
import { InputSection, JournalEntries } from './task-input'

/**
 * The drawer a row of the task table opens: what the task was asked (payload, params, messages,
 * model, agent module), its answer, its execution's journal and ledger rows, each with a copy button.
 */
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
      {detail ? <InputSection input={detail.input} /> : null}
      {answer ? (
        <AnswerSection answer={answer} />
      ) : error ? null : (
        <p className="muted">Loading…</p>
      )}
      {detail ? <JournalEntries entries={detail.journal} /> : null}
      {detail ? <LedgerRows rows={detail.ledger} /> : null}
      {detail ? <TaskLogLines lines={detail.log} /> : null}
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
    <section className="task-detail-answer" aria-label="Answer">
      <h3 className="task-detail-section">Answer</h3>
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
        <div className="task-detail-block">
          <div className="task-detail-block-head">
            <span className="muted">Text</span>
            <CopyButton text={answer.text} testId="task-detail-answer-copy" />
          </div>
          <pre className="task-detail-text" data-testid="task-detail-answer">
            {answer.text}
          </pre>
        </div>
      ) : (
        <p className="muted">No answer yet.</p>
      )}
    </section>
  )
}

/**
 * The task's journal of calls: each ledger row with its call index, model, tokens and cost, live
 * or replayed from the journal of an earlier run (nothing sent, its cost saved).
 */
function LedgerRows({ rows }: { rows: TaskLedgerRowView[] }) {
  if (rows.length === 0) return <p className="muted">No ledger rows for this task.</p>
  return (
    <div className="task-detail-ledger-box">
      <table className="task-detail-ledger" data-testid="task-detail-ledger">
        <caption>
          Calls{' '}
          <CopyButton text={ledgerTsv(rows)} label="Copy as TSV" testId="task-detail-ledger-copy" />
        </caption>
        <thead>
          <tr>
            <th>Time</th>
            <th title="The call's index within its execution">Call</th>
            <th>Model</th>
            <th>Outcome</th>
            <th>In</th>
            <th>Out</th>
            <th>Cost</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-testid="task-detail-ledger-row" data-outcome={r.outcome}>
              <td>{formatDateTime(r.ts)}</td>
              <td>{r.step === 0 ? '—' : r.step}</td>
              <td className="mono">{r.model}</td>
              <td>
                {r.outcome === 'replayed' ? (
                  <span
                    className="badge"
                    title="Answered by the journal of an earlier run: not sent"
                  >
                    replayed
                  </span>
                ) : (
                  r.outcome
                )}
                {r.reason ? <span className="muted"> ({r.reason})</span> : null}
              </td>
              <td>{formatInt(r.inputTokens)}</td>
              <td>{formatInt(r.outputTokens)}</td>
              <td>
                {r.outcome === 'reused' || r.outcome === 'replayed'
                  ? `saved ${formatUsd(r.savedMicros)}`
                  : formatUsd(r.costMicros)}
              </td>
              <td>{r.status ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** The calls as tab-separated lines with a header: pastes into a spreadsheet as a table. */
function ledgerTsv(rows: TaskLedgerRowView[]): string {
  const head = [
    'time',
    'call',
    'model',
    'outcome',
    'reason',
    'input_tokens',
    'output_tokens',
    'cost_micros',
    'saved_micros',
    'status',
  ]
  const lines = rows.map((r) =>
    [
      new Date(r.ts).toISOString(),
      r.step,
      r.model,
      r.outcome,
      r.reason ?? '',
      r.inputTokens,
      r.outputTokens,
      r.costMicros ?? '',
      r.savedMicros ?? '',
      r.status ?? '',
    ].join('\t'),
  )
  return [head.join('\t'), ...lines].join('\n')
}

const LOG_LABELS: Record<TaskLogLineView['kind'], string> = {
  log: 'log',
  step: 'step',
  divergence: 'diverged',
  lost: 'answer lost',
}

/** The task's log: an agent's lines, its steps, replays that diverged, answers that were lost. */
function TaskLogLines({ lines }: { lines: TaskLogLineView[] }) {
  if (lines.length === 0) return null
  return (
    <section className="task-detail-log" aria-label="Task log">
      <h3>Log</h3>
      <ol data-testid="task-detail-log">
        {lines.map((l) => (
          <li key={l.seq} data-kind={l.kind} data-testid="task-detail-log-line">
            <span className="muted">{formatDateTime(l.ts)}</span>{' '}
            <span className={l.kind === 'log' ? 'muted' : 'badge'}>{LOG_LABELS[l.kind]}</span>{' '}
            <span className="mono">{l.message}</span>
          </li>
        ))}
      </ol>
    </section>
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
