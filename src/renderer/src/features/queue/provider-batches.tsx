import { useEffect, useState } from 'react'
import type { BatchSummary, CommandError, ProviderBatchSummary } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'
import { canCancelRemote, remoteCounts, remoteTone, waitedText } from './provider-batch-rules'

/** The time now, moved every second while `live` (a provider batch's wait is counted here). */
function useNow(live: boolean): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!live) return
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [live])
  return now
}

/**
 * A batch sent through the vendors' batch APIs: each provider batch that carries its calls, with
 * the vendor's state and counts as last polled, how long it has waited, and a Cancel (what
 * finished is kept and priced, as `pacer provider-batches cancel` does).
 */
export function ProviderBatches({ batch }: { batch: BatchSummary }) {
  const remote = batch.providerBatches ?? []
  const now = useNow(remote.some((r) => !r.ended))
  return (
    <div className="provider-batches-block" data-testid="provider-batches">
      <span className="muted" data-testid="batch-via-batch-api">
        via Batch API (half price, results within 24 h)
        {remote.length === 0 ? ': gathering the first round…' : ''}
      </span>
      {remote.length > 0 ? (
        <ul className="provider-batches">
          {remote.map((r) => (
            <ProviderBatchRow key={r.id} remote={r} now={now} />
          ))}
        </ul>
      ) : null}
    </div>
  )
}

function ProviderBatchRow({ remote: r, now }: { remote: ProviderBatchSummary; now: number }) {
  const cancel = useStore((s) => s.cancelProviderBatch)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<CommandError | null>(null)
  const tone = remoteTone(r)
  const onCancel = async () => {
    setBusy(true)
    setError(null)
    const reply = await cancel(r.id)
    setBusy(false)
    if (!reply.ok) setError(reply.error)
  }
  return (
    <li
      className="provider-batch"
      data-testid="provider-batch"
      data-remote-id={r.remoteId ?? ''}
      data-status={r.status}
    >
      <span>{r.vendor}</span>
      <span className="mono" data-testid="provider-batch-id">
        {r.remoteId ?? `#${r.id} (not accepted)`}
      </span>
      <span
        className={`pill${tone === 'good' ? ' pill-good' : tone === 'bad' ? ' pill-bad' : ''}`}
        data-testid="provider-batch-status"
      >
        {r.status}
      </span>
      <span data-testid="provider-batch-counts">{remoteCounts(r)}</span>
      <span className="muted" data-testid="provider-batch-waited">
        {r.ended ? 'took' : 'waiting'} {waitedText(r, now)}
      </span>
      {r.error ? <span className="bad">{r.error}</span> : null}
      {canCancelRemote(r) ? (
        <button
          type="button"
          className="button small ghost"
          disabled={busy}
          title="Ask the vendor to stop it: requests already done are kept and priced"
          onClick={() => void onCancel()}
          data-testid="provider-batch-cancel"
        >
          Cancel
        </button>
      ) : null}
      {error ? <InlineError error={error} /> : null}
    </li>
  )
}
