import { describe, expect, it } from 'vitest'
import {
  canCancel,
  canPause,
  canResume,
  batchLabel,
  retryableCount,
} from '../../../src/renderer/src/features/queue/batch-rules'
import { allowsBatchAction } from '../../../src/shared/batch-states'
import { BatchState, type BatchSummary } from '../../../src/shared/contract'

const summary = (state: BatchState, failed: number, cancelled: number): BatchSummary => ({
  id: 'b1',
  name: 'b',
  source: null,
  state,
  audit: false,
  createdAt: 0,
  updatedAt: 0,
  total: failed + cancelled,
  counts: { queued: 0, running: 0, succeeded: 0, reused: 0, failed, cancelled },
})

describe('batch-rules', () => {
  it.each(BatchState.options)('offers for a %s batch exactly what the engine allows', (state) => {
    expect(canPause(state)).toBe(allowsBatchAction('pause', state))
    expect(canResume(state)).toBe(allowsBatchAction('resume', state))
    expect(canCancel(state)).toBe(allowsBatchAction('cancel', state))
  })

  it('offers Pause for an interrupted batch, as the engine pauses it', () => {
    expect(canPause('interrupted')).toBe(true)
  })

  it('counts failed and cancelled tasks as retryable', () => {
    expect(retryableCount(summary('done', 2, 1))).toBe(3)
    expect(retryableCount(summary('running', 0, 0))).toBe(0)
  })
})

describe('batchLabel', () => {
  it('tells two runs of one file apart by their start and id', () => {
    const first = { id: 'b-1', name: 'tickets.csv', source: 'tickets.csv', createdAt: 0 }
    const second = { ...first, id: 'b-2', createdAt: 3_600_000 }
    expect(batchLabel(first)).not.toBe(batchLabel(second))
    expect(batchLabel(second)).toMatch(/^tickets\.csv · .* · b-2$/)
    expect(batchLabel({ ...first, name: '', source: null })).toMatch(/^b-1 · /)
  })
})
