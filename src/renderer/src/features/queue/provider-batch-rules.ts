// How a provider batch (a submission to OpenAI's Batch API or Anthropic's Message Batches) reads
// in the Queue view: its state, counts and time waiting, and whether it can still be cancelled.
import type { ProviderBatchSummary } from '../../../../shared/contract'
import { formatInt } from '../../../../shared/format'

/** Statuses after which a cancel has nothing left to stop (or has already been asked for). */
const NO_CANCEL = new Set(['cancelling', 'canceling', 'cancelled', 'submitting'])

/** Whether the Cancel button is offered: accepted by the vendor, not ended, no cancel under way. */
export function canCancelRemote(r: ProviderBatchSummary): boolean {
  return !r.ended && r.remoteId !== null && !NO_CANCEL.has(r.status)
}

/** The vendor's counts in a line: "3 completed, 0 failed of 4" (Anthropic's stay 0 till the end). */
export function remoteCounts(r: ProviderBatchSummary): string {
  const total = `${formatInt(r.requests)} request${r.requests === 1 ? '' : 's'}`
  if (!r.counts) return `${total}, no counts yet`
  const parts = Object.entries(r.counts)
    .filter(([k]) => k !== 'total')
    .map(([k, n]) => `${formatInt(n)} ${k}`)
  return parts.length > 0 ? `${parts.join(', ')} of ${total}` : total
}

/** How long it has waited (till its end once ended), in its two largest units: "1h 5m", "42s". */
export function waitedText(r: ProviderBatchSummary, now: number): string {
  const s = Math.max(0, Math.floor(((r.endedAt ?? now) - r.createdAt) / 1000))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  if (h > 0) return `${h}h ${m}m`
  if (m > 0) return `${m}m ${s % 60}s`
  return `${s}s`
}

/** The tone of its status badge: done, bad, stopped, or under way. */
export function remoteTone(r: ProviderBatchSummary): 'good' | 'bad' | 'muted' | 'active' {
  if (['failed', 'expired', 'refused', 'abandoned'].includes(r.status)) return 'bad'
  if (['cancelling', 'canceling', 'cancelled'].includes(r.status)) return 'muted'
  if (r.ended || r.status === 'completed') return 'good'
  return 'active'
}
