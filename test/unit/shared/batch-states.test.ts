import { describe, expect, it } from 'vitest'
import { allowsBatchAction, type BatchAction } from '../../../src/shared/batch-states'
import { BatchState } from '../../../src/shared/contract'

describe('allowsBatchAction', () => {
  it('is the engine rule for every action and state', () => {
    const matrix = Object.fromEntries(
      (['pause', 'resume', 'cancel', 'retry'] as BatchAction[]).map((action) => [
        action,
        BatchState.options.filter((state) => allowsBatchAction(action, state)),
      ]),
    )
    expect(matrix).toEqual({
      pause: ['running', 'interrupted'],
      resume: ['paused', 'interrupted'],
      cancel: ['running', 'paused', 'interrupted'],
      retry: ['running', 'paused', 'interrupted', 'cancelled', 'done'],
    })
  })

  it('never allows leaving a finished batch except by retrying its tasks', () => {
    for (const state of ['cancelled', 'done'] as const) {
      expect(allowsBatchAction('pause', state)).toBe(false)
      expect(allowsBatchAction('resume', state)).toBe(false)
      expect(allowsBatchAction('cancel', state)).toBe(false)
      expect(allowsBatchAction('retry', state)).toBe(true)
    }
  })
})
