import { useState } from 'react'
import type { BatchSummary, CommandError, Reply } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { StatusBadge } from '../../components/status-badge'
import { formatDateTime, formatInt, formatPercent } from '../../lib/format'
import { useStore } from '../../store'
import {
  canCancel,
  canPause,
  canResume,
  finishedCount,
  PROGRESS_SEGMENTS,
  retryableCount,
} from './batch-rules'
import { ProviderBatches } from './provider-batches'

export function BatchList() {
  const batches = useStore((s) => s.batches)
  return (
    <section className="panel batches">
      <div className="panel-head">
        <h2>
          Batches <span className="muted">{formatInt(batches.length)}</span>
        </h2>
      </div>
      <div className="batch-list" data-testid="batch-list">
        {batches.map((b) => (
          <BatchRow key={b.id} batch={b} />
        ))}
      </div>
    </section>
  )
}

function BatchRow({ batch: b }: { batch: BatchSummary }) {
  const selected = useStore((s) => s.taskFilter.batchId === b.id)
  const setBatchFilter = useStore((s) => s.setBatchFilter)
  const pause = useStore((s) => s.pauseBatch)
  const resume = useStore((s) => s.resumeBatch)
  const cancel = useStore((s) => s.cancelBatch)
  const retry = useStore((s) => s.retryTasks)
  const [error, setError] = useState<CommandError | null>(null)
  const [busy, setBusy] = useState(false)
  const [confirmCancel, setConfirmCancel] = useState(false)

  const run = async (action: () => Promise<Reply<unknown>>): Promise<void> => {
    setBusy(true)
    setError(null)
    const reply = await action()
    setBusy(false)
    setConfirmCancel(false)
    if (!reply.ok) setError(reply.error)
  }

  const done = finishedCount(b)
  const retryable = retryableCount(b)

  return (
    <div
      className={`batch-row${selected ? ' selected' : ''}`}
      data-testid="batch-row"
      data-batch-id={b.id}
      data-state={b.state}
    >
      <button
        type="button"
        className="batch-name"
        title={selected ? 'Show tasks of all batches' : 'Show only this batch’s tasks'}
        onClick={() => setBatchFilter(selected ? null : b.id)}
      >
        <span className="batch-title">{b.name || b.source || b.id}</span>
        <span className="muted mono">
          {b.id} · {formatDateTime(b.createdAt)}
          {b.audit ? ' · audit' : ''}
        </span>
      </button>
      <StatusBadge status={b.state} />
      <div className="batch-progress">
        <div className="progress" role="img" aria-label={`${done} of ${b.total} finished`}>
          {PROGRESS_SEGMENTS.map((s) =>
            b.counts[s] > 0 ? (
              <span
                key={s}
                className={`seg seg-${s}`}
                // Widths are data, not style: the one place this view needs an inline style.
                style={{ width: `${(b.counts[s] / Math.max(b.total, 1)) * 100}%` }}
                title={`${s}: ${formatInt(b.counts[s])}`}
              />
            ) : null,
          )}
        </div>
        <span className="progress-text" data-testid="batch-progress">
          {formatInt(done)} / {formatInt(b.total)} · {formatPercent(done, b.total)}
          {b.counts.reused ? ` · ${formatInt(b.counts.reused)} reused` : ''}
          {b.counts.failed ? ` · ${formatInt(b.counts.failed)} failed` : ''}
          {b.counts.cancelled ? ` · ${formatInt(b.counts.cancelled)} cancelled` : ''}
        </span>
        {b.owner && !b.owner.alive && b.state === 'interrupted' && !b.stopReason ? (
          <p className="batch-stop-reason" data-testid="batch-owner-gone">
            its run (pid {b.owner.pid ?? '?'} on {b.owner.host ?? '?'}) is gone: Resume, or run the
            same command again
          </p>
        ) : b.owner && b.state === 'running' ? (
          <p className="muted" data-testid="batch-owner">
            run by pid {b.owner.pid ?? '?'} on {b.owner.host ?? '?'}
          </p>
        ) : null}
        {b.batchApi ? <ProviderBatches batch={b} /> : null}
        {b.stopReason ? (
          <p className="batch-stop-reason" data-testid="batch-stop-reason">
            {b.stopReason}: fix it, then Resume
          </p>
        ) : null}
      </div>
      <div className="batch-actions">
        {canPause(b.state) ? (
          <button
            type="button"
            className="button small"
            disabled={busy}
            onClick={() => void run(() => pause(b.id))}
            data-testid="batch-pause"
          >
            Pause
          </button>
        ) : null}
        {canResume(b.state) ? (
          <button
            type="button"
            className="button small"
            disabled={busy}
            onClick={() => void run(() => resume(b.id))}
            data-testid="batch-resume"
          >
            Resume
          </button>
        ) : null}
        {retryable > 0 ? (
          <button
            type="button"
            className="button small"
            disabled={busy}
            onClick={() => void run(() => retry({ batchId: b.id }))}
            data-testid="batch-retry"
          >
            Retry {formatInt(retryable)}
          </button>
        ) : null}
        {canCancel(b.state) ? (
          confirmCancel ? (
            <>
              <button
                type="button"
                className="button small danger"
                disabled={busy}
                onClick={() => void run(() => cancel(b.id))}
                data-testid="batch-cancel-confirm"
              >
                Cancel batch
              </button>
              <button
                type="button"
                className="button small ghost"
                onClick={() => setConfirmCancel(false)}
              >
                Keep
              </button>
            </>
          ) : (
            <button
              type="button"
              className="button small ghost"
              disabled={busy}
              onClick={() => setConfirmCancel(true)}
              data-testid="batch-cancel"
            >
              Cancel
            </button>
          )
        ) : null}
      </div>
      {error ? (
        <div className="batch-error">
          <InlineError error={error} />
        </div>
      ) : null}
    </div>
  )
}
