import type { PacerApi } from '../../../shared/client'
import type { BatchSummary, ProviderBatchSummary, Reply } from '../../../shared/contract'
import { call } from './api'
import type { SliceCreator } from './types'

/** The batch list: its rows, kept live by tasks:changed, and the commands run on one batch. */
export interface BatchesSlice {
  /** Newest first. */
  batches: BatchSummary[]
  batchesLoaded: boolean

  loadBatches(): Promise<void>
  pauseBatch(batchId: string): Promise<Reply<BatchSummary>>
  resumeBatch(batchId: string): Promise<Reply<BatchSummary>>
  cancelBatch(batchId: string): Promise<Reply<BatchSummary>>
  /** Asks the vendor to cancel one provider batch (Pacer's number for it). */
  cancelProviderBatch(id: number): Promise<Reply<ProviderBatchSummary>>
}

/** The batches with one provider batch replaced by its newer view; the same array when absent. */
export function withProviderBatch(
  batches: readonly BatchSummary[],
  remote: ProviderBatchSummary,
): BatchSummary[] {
  let changed = false
  const out = batches.map((b) => {
    if (!b.providerBatches?.some((r) => r.id === remote.id)) return b
    changed = true
    return {
      ...b,
      providerBatches: b.providerBatches.map((r) => (r.id === remote.id ? remote : r)),
    }
  })
  return changed ? out : (batches as BatchSummary[])
}

/** Replaces batches by id with their newer versions, newest first; the same array when none. */
export function upsertBatches(
  current: readonly BatchSummary[],
  changed: readonly BatchSummary[],
): BatchSummary[] {
  if (changed.length === 0) return current as BatchSummary[]
  const byId = new Map(current.map((b) => [b.id, b]))
  for (const b of changed) byId.set(b.id, b)
  return [...byId.values()].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
}

export const createBatchesSlice: SliceCreator<BatchesSlice> = (set, get) => {
  const batchCommand = async (
    run: (api: PacerApi) => Promise<Reply<BatchSummary>>,
  ): Promise<Reply<BatchSummary>> => {
    const reply = await call(run)
    if (reply.ok) set({ batches: upsertBatches(get().batches, [reply.value]) })
    return reply
  }

  return {
    batches: [],
    batchesLoaded: false,

    loadBatches: async () => {
      const reply = await call((api) => api.listBatches({}))
      if (!reply.ok) {
        get().reportError('Could not load batches', reply.error)
        return
      }
      set({ batches: upsertBatches([], reply.value), batchesLoaded: true })
    },

    pauseBatch: (batchId) => batchCommand((api) => api.pauseBatch({ batchId })),
    resumeBatch: (batchId) => batchCommand((api) => api.resumeBatch({ batchId })),
    cancelBatch: (batchId) => batchCommand((api) => api.cancelBatch({ batchId })),
    cancelProviderBatch: async (id) => {
      const reply = await call((api) => api.cancelProviderBatch({ id }))
      if (reply.ok) set({ batches: withProviderBatch(get().batches, reply.value) })
      return reply
    },
  }
}
