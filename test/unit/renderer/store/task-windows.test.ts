import { describe, expect, it } from 'vitest'
import {
  changesMembership,
  countTasks,
  evictWindows,
  isRetryable,
  MAX_WINDOWS,
  mergeRows,
  statusCounts,
  windowKeysFor,
} from '../../../../src/renderer/src/store/task-windows'
import { batch, task } from './fake-pacer'

describe('task windows', () => {
  it('covers the rows in view plus half a window each side, within the total', () => {
    expect(windowKeysFor(0, 40, 0)).toEqual([0])
    expect(windowKeysFor(0, 40, 41)).toEqual([0])
    expect(windowKeysFor(900, 940, 5000)).toEqual([1, 2])
    expect(windowKeysFor(900, 940, 1000)).toEqual([1])
  })

  it('merges newer rows in place, the same object when nothing loaded changed', () => {
    const windows = { 0: [task(1), task(2)], 1: [task(3)] }
    expect(mergeRows(windows, [task(9, { status: 'failed' })])).toBe(windows)
    const merged = mergeRows(windows, [task(2, { status: 'running' })])
    expect(merged[0]!.map((r) => r.status)).toEqual(['queued', 'running'])
    expect(merged[1]).toBe(windows[1])
  })

  it('sees a row leaving or entering a status filter, never without one', () => {
    const windows = { 0: [task(1)] }
    const queued = { statuses: ['queued' as const], batchId: null }
    expect(changesMembership(windows, [task(1, { status: 'running' })], queued)).toBe(true)
    expect(changesMembership(windows, [task(2)], queued)).toBe(true)
    expect(changesMembership(windows, [task(1)], queued)).toBe(false)
    expect(
      changesMembership(windows, [task(2, { batchId: 'b9' })], { ...queued, batchId: 'b1' }),
    ).toBe(false)
    expect(changesMembership(windows, [task(2)], { statuses: [], batchId: null })).toBe(false)
  })

  it('counts the tasks a filter selects from the batches, and per status', () => {
    const batches = [batch('b1', 1, { queued: 2, failed: 1 }), batch('b2', 2, { queued: 5 })]
    expect(countTasks(batches, { statuses: [], batchId: null })).toBe(8)
    expect(countTasks(batches, { statuses: ['queued'], batchId: 'b1' })).toBe(2)
    expect(statusCounts(batches, null)).toMatchObject({ queued: 7, failed: 1 })
    expect(statusCounts(batches, 'b2')).toMatchObject({ queued: 5, failed: 0 })
  })

  it('drops the windows farthest from view beyond the ones it keeps', () => {
    const windows = Object.fromEntries(
      Array.from({ length: MAX_WINDOWS + 2 }, (_, k) => [k, [task(k)]]),
    )
    expect(evictWindows({ 0: [task(1)] }, [0])).toEqual({ 0: [task(1)] })
    const kept = Object.keys(evictWindows(windows, [0])).map(Number)
    expect(kept).toEqual(Array.from({ length: MAX_WINDOWS }, (_, k) => k))
  })

  it('lets only failed and cancelled tasks be retried', () => {
    expect(
      ['failed', 'cancelled', 'queued', 'succeeded'].map((s) => isRetryable(s as never)),
    ).toEqual([true, true, false, false])
  })
})
