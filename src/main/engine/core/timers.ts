// Timers whose delay comes from outside (a provider's retry-after, a pause read from a shared
// store). Node keeps a delay of at most 2^31-1 ms (~24.8 days): anything longer, Infinity or NaN
// fires after 1 ms with a TimeoutOverflowWarning, so a far-future wait that re-arms itself on
// waking becomes a busy loop printing a warning each time.

/** The longest delay one Node timer holds: 2^31-1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * A delay Node keeps as given: whole ms from 1 to MAX_TIMER_MS (a longer or infinite one is cut
 * to the maximum, so whoever waits wakes early and must look again; NaN is 1 ms, as Node has it).
 */
export function timerMs(ms: number): number {
  if (Number.isNaN(ms)) return 1
  return Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(ms)))
}

/**
 * Resolves after `ms` (any length: a wait beyond one timer's reach is slept in pieces), or rejects
 * with the signal's reason once it aborts.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const end = Date.now() + ms
    let timer: NodeJS.Timeout | undefined
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const arm = (left: number) => {
      timer = setTimeout(() => {
        const rest = end - Date.now()
        if (rest > 0 && left > MAX_TIMER_MS) return arm(rest)
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, timerMs(left))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    arm(ms)
  })
}
