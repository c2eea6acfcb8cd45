/**
 * The console's one store, made of typed slices. Actions live on the state, so event listeners
 * and other non-React code call them through `useStore.getState()`.
 */
import { create } from 'zustand'
import { createBatchesSlice } from './batches-slice'
import { createConcurrencySlice } from './concurrency-slice'
import { createImportSlice } from './import-slice'
import { createSettingsSlice } from './settings-slice'
import { createSpendSlice } from './spend-slice'
import { createTaskDetailSlice } from './task-detail-slice'
import { createTasksSlice } from './tasks-slice'
import type { Store } from './types'
import { createUiSlice } from './ui-slice'

/** A new store with every slice: the console makes one (`useStore`), tests one per case. */
export function createConsoleStore() {
  return create<Store>()((...a) => ({
    ...createBatchesSlice(...a),
    ...createTasksSlice(...a),
    ...createTaskDetailSlice(...a),
    ...createImportSlice(...a),
    ...createConcurrencySlice(...a),
    ...createSpendSlice(...a),
    ...createSettingsSlice(...a),
    ...createUiSlice(...a),
  }))
}

export const useStore = createConsoleStore()

export type { Store } from './types'
export type { View } from './ui-slice'

/**
 * Header numbers: what is running now against what the scheduler allows, summed over partitions.
 * `only` names the partition when there is exactly one, so the header can say whose limit it is.
 */
export function selectLiveLoad(s: Store): {
  inflight: number
  limit: number
  partitions: number
  only: string | null
} {
  let inflight = 0
  let limit = 0
  for (const p of s.partitions) {
    inflight += p.inflight
    limit += Math.floor(p.limit)
  }
  const only = s.partitions.length === 1 ? s.partitions[0]!.partition : null
  return { inflight, limit, partitions: s.partitions.length, only }
}
