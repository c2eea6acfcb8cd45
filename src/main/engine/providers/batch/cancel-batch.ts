// A Pacer batch sent through the vendors' batch APIs, cancelled (the console's Cancel, or a
// `pacer` process seeing its batch cancelled): its calls wait at the vendor, so aborting them
// would throw away the lines that already finished and leave the provider batches running (and
// billed). Instead no more rounds go out, each open provider batch is asked to cancel once (the
// vendor keeps what finished and ends the batch), and the run lets those answers land, priced,
// before it cancels what is left.
import type { BatchApi } from './collector'

/**
 * Returns the run's check for a cancelled batch: each call holds the rounds, asks the vendor to
 * cancel the open submissions not asked yet, and says whether any is still open (lines to land).
 */
export function cancelBatchCheck(api: BatchApi, batchId: string): () => boolean {
  const asked = new Set<number>()
  return () => {
    api.hold()
    const open = api.journal.ofBatch(batchId).filter((s) => !s.ended)
    for (const s of open) {
      // Still being sent: asked at a later look, once the vendor has given its id.
      if (s.remoteId === null || asked.has(s.id)) continue
      asked.add(s.id)
      api.cancel(String(s.id), api.link(s.endpoint).headers).catch((err: unknown) => {
        api.emit('warning', `cancelling provider batch ${s.remoteId}: ${(err as Error).message}`)
      })
    }
    return open.length > 0
  }
}
