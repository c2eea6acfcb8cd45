/**
 * A desktop notification when a kept spend cap crosses a warning threshold (50, 80, 100 %): the
 * thresholds the Budgets banner shows, read from the same list (`budgets:list`), so one crossed
 * by any process on the database (a `pacer run` in a terminal included) is told, once per cap,
 * period and threshold while the app runs. What was crossed before the app opened was told then
 * (the banner still shows it): the first read only notes it.
 */
import { Notification } from 'electron'
import type { SpendCapView } from '../../shared/contract'
import { formatUsd } from '../../shared/format'

/** How often the caps are read: a handful of rows, and a threshold is news, not an alarm. */
export const NOTIFY_EVERY_MS = 5000

/** A notification to show. */
export interface CapNotice {
  title: string
  body: string
}

/** The thresholds told so far, per cap and period; `next` says what a fresh read adds. */
export class CapNotices {
  readonly #told = new Map<string, number>()
  #primed = false

  /** The notices of thresholds first seen in this read (none on the first read). */
  next(caps: readonly SpendCapView[]): CapNotice[] {
    const notices: CapNotice[] = []
    for (const c of caps) {
      if (c.warnedPercent === null) continue
      const key = `${c.id}\u0000${c.periodKey}\u0000${c.capMicros}`
      if ((this.#told.get(key) ?? 0) >= c.warnedPercent) continue
      this.#told.set(key, c.warnedPercent)
      if (this.#primed) notices.push(noticeOf(c, c.warnedPercent))
    }
    this.#primed = true
    return notices
  }
}

function noticeOf(c: SpendCapView, percent: number): CapNotice {
  const period = c.period === 'total' ? '' : ` for ${c.periodKey} (${c.zone})`
  const spent = formatUsd(c.spentMicros + c.inDoubtMicros)
  return {
    title: `Pacer: ${percent}% of a spend cap`,
    body:
      `${percent}% of the ${formatUsd(c.capMicros)} cap on ${c.scope}${period} reached: ` +
      `${spent} spent` +
      (percent >= 100 ? '; work it covers is held (raise it in Spend > Budgets)' : ''),
  }
}

/**
 * Reads the caps every NOTIFY_EVERY_MS and shows Electron's Notification for each new threshold
 * (nothing where the system has no notifications). Returns the stop.
 */
export function watchBudgetNotifications(
  list: () => Promise<SpendCapView[]>,
  everyMs = NOTIFY_EVERY_MS,
): () => void {
  const notices = new CapNotices()
  let reading = false
  const read = async () => {
    if (reading) return
    reading = true
    try {
      const found = notices.next(await list())
      if (found.length === 0 || !Notification.isSupported()) return
      for (const n of found) new Notification({ title: n.title, body: n.body }).show()
    } catch (err) {
      // A read that fails (the database busy, the engine closing) is tried again next time.
      console.error('pacer: budget notifications:', err)
    } finally {
      reading = false
    }
  }
  void read()
  const timer = setInterval(() => void read(), everyMs)
  return () => clearInterval(timer)
}
