// Whether the worker a claim was taken over from may still be running: a takeover follows an
// expired lease, which a dead process and a stalled one (stopped, swapped out, a long GC) leave
// alike. Only a process on this host can be asked.
import { hostname } from 'node:os'

/**
 * True when `workerId` (`host:pid:nonce`, engine/parts.ts) names a process of this host that is
 * still there; false when it is gone, and for another host's or an unreadable id (its lease ran
 * out: it is treated as gone).
 */
export function ownerAlive(workerId: string): boolean {
  const [host, pidText] = workerId.split(':')
  const pid = Number(pidText)
  if (host !== hostname() || !Number.isSafeInteger(pid) || pid <= 0) return false
  // Another engine of this very process (tests, a console beside a run).
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: it exists, it is someone else's.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
