// A submission whose process died between the vendor accepting it and its id being journaled:
// found again at the vendor by the tag it carried, so its work is not submitted twice.
import { sleep } from '../../core/timers'
import type { Clock } from '../../core/types'
import type { WriteScope } from '../../db/step-writes'
import type { BatchJournal, Submission } from './journal'
import { VENDORS, type Accepted, type VendorLink } from './vendors'

/**
 * The tag a submission carries to the vendor (OpenAI: metadata.pacer_submission): the journal's
 * id and the time it was begun, so a rerun can find the batch again when its id never got home.
 */
export function submissionTag(s: { id: number; createdAt: number }): string {
  return `pacer-${s.id}-${s.createdAt}`
}

/**
 * A lost submission's batch at the vendor, looked up by its tag; null: not there, or the vendor
 * keeps nothing to find it by (then `warn` says so, with what to cancel by hand).
 */
export async function findLost(
  s: Submission,
  link: VendorLink,
  o: { pollMs: number; signal: AbortSignal; warn(message: string): void },
): Promise<Accepted | null> {
  const api = VENDORS[s.vendor]
  const tag = submissionTag(s)
  if (!api.find) {
    o.warn(
      `provider batch ${s.id}: the process submitting it ended before ${s.vendor} answered; ` +
        `${s.vendor} batches carry no tag to find it by, so its ${s.requests} requests are sent ` +
        `again: if ${s.vendor}'s console lists a batch of ${s.requests} requests created ` +
        `about ${new Date(s.createdAt).toISOString()}, cancel it there`,
    )
    return null
  }
  for (let failures = 1; ; failures++) {
    try {
      return await api.find(link, tag, s.createdAt)
    } catch (err) {
      // Not knowing is not 'not there': sending again could pay twice. Asked again at the next
      // poll, as a failed poll is.
      if (o.signal.aborted) throw err
      if (failures === 1 || failures % 10 === 0) {
        o.warn(`looking for ${tag} at ${s.vendor}: ${(err as Error).message}`)
      }
      await sleep(o.pollMs, o.signal)
    }
  }
}

/**
 * A submission begun by a process that died before the vendor's answer was written: the vendor
 * may have accepted it all the same. Found again by its tag, its id is journaled and it is polled
 * like any other (true); not found, or a vendor that keeps no tag, it is ended 'abandoned' and its
 * lines are given back for the next round (false).
 */
export async function recoverLost(
  journal: BatchJournal,
  s: Submission,
  link: VendorLink,
  o: Parameters<typeof findLost>[2] & { writes: WriteScope; clock: Clock },
): Promise<boolean> {
  const found = await findLost(s, link, o)
  o.writes.run(() =>
    found
      ? journal.submitted(s.id, found.remoteId, found.inputFile, found.status)
      : journal.end(
          s.id,
          'abandoned',
          [],
          { state: 'errored', status: 0, body: '{}' },
          o.clock.now(),
          'the process submitting it ended before the vendor answered',
        ),
  )
  await o.writes.durable()
  return found !== null
}
