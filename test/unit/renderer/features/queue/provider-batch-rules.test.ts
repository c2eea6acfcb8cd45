// How the Queue view reads a provider batch: counts, time waiting, the Cancel it offers, and a
// cancel's answer put in place under its batch.
import { describe, expect, it } from 'vitest'
import type { BatchSummary, ProviderBatchSummary } from '../../../../../src/shared/contract'
import {
  canCancelRemote,
  remoteCounts,
  remoteTone,
  waitedText,
} from '../../../../../src/renderer/src/features/queue/provider-batch-rules'
import { withProviderBatch } from '../../../../../src/renderer/src/store/batches-slice'

const remote = (patch: Partial<ProviderBatchSummary> = {}): ProviderBatchSummary => ({
  id: 1,
  vendor: 'openai',
  model: 'gpt-4o-mini',
  remoteId: 'batch_1',
  status: 'in_progress',
  ended: false,
  requests: 4,
  counts: { total: 4, completed: 2, failed: 0 },
  createdAt: 1_000,
  endedAt: null,
  error: null,
  ...patch,
})

describe('a provider batch in the Queue view', () => {
  it('reads its counts without the total twice, and says when there are none yet', () => {
    expect(remoteCounts(remote())).toBe('2 completed, 0 failed of 4 requests')
    expect(remoteCounts(remote({ counts: null, requests: 1 }))).toBe('1 request, no counts yet')
    // Anthropic's counts stay 0 until the end, processing aside.
    const anthropic = { processing: 4, succeeded: 0, errored: 0, canceled: 0, expired: 0 }
    expect(remoteCounts(remote({ vendor: 'anthropic', counts: anthropic }))).toBe(
      '4 processing, 0 succeeded, 0 errored, 0 canceled, 0 expired of 4 requests',
    )
  })

  it('counts the wait till now, or till its end once ended, in its two largest units', () => {
    expect(waitedText(remote(), 1_000 + 42_500)).toBe('42s')
    expect(waitedText(remote(), 1_000 + 3_723_000)).toBe('1h 2m')
    expect(waitedText(remote({ ended: true, endedAt: 1_000 + 125_000 }), 9e9)).toBe('2m 5s')
    expect(waitedText(remote(), 0)).toBe('0s')
  })

  it('offers Cancel only while the vendor runs it and no cancel is under way', () => {
    expect(canCancelRemote(remote())).toBe(true)
    expect(canCancelRemote(remote({ status: 'validating' }))).toBe(true)
    expect(canCancelRemote(remote({ status: 'cancelling' }))).toBe(false)
    expect(canCancelRemote(remote({ vendor: 'anthropic', status: 'canceling' }))).toBe(false)
    expect(canCancelRemote(remote({ status: 'completed', ended: true }))).toBe(false)
    expect(canCancelRemote(remote({ remoteId: null, status: 'submitting' }))).toBe(false)
  })

  it('colours what failed or expired apart from what completed or stopped', () => {
    expect(remoteTone(remote({ status: 'expired', ended: true }))).toBe('bad')
    expect(remoteTone(remote({ status: 'failed', ended: true }))).toBe('bad')
    expect(remoteTone(remote({ status: 'cancelled', ended: true }))).toBe('muted')
    expect(remoteTone(remote({ status: 'completed', ended: true }))).toBe('good')
    expect(remoteTone(remote({ vendor: 'anthropic', status: 'ended', ended: true }))).toBe('good')
    expect(remoteTone(remote())).toBe('active')
  })

  it('puts a cancel’s answer in place under its batch, and leaves the list alone otherwise', () => {
    const batch = { id: 'b1', providerBatches: [remote(), remote({ id: 2 })] } as BatchSummary
    const other = { id: 'b2' } as BatchSummary
    const list = [batch, other]
    const after = withProviderBatch(list, remote({ id: 2, status: 'cancelling' }))
    expect(after[0]!.providerBatches!.map((r) => r.status)).toEqual(['in_progress', 'cancelling'])
    expect(after[1]).toBe(other)
    expect(withProviderBatch(list, remote({ id: 9 }))).toBe(list)
  })
})
