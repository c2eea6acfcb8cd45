/** Rate limiters for event streams that can fire faster than a person can read. */

export interface Throttled<A extends unknown[]> {
  (...args: A): void
  cancel(): void
}

/** Leading + trailing throttle: the first call runs now, the last one in a burst is never lost. */
export function throttle<A extends unknown[]>(fn: (...args: A) => void, ms: number): Throttled<A> {
  let last = 0
  let timer: ReturnType<typeof setTimeout> | null = null
  let pending: A | null = null
  const run = (args: A): void => {
    last = Date.now()
    fn(...args)
  }
  const throttled = (...args: A): void => {
    const wait = ms - (Date.now() - last)
    if (wait <= 0 && timer === null) {
      run(args)
      return
    }
    pending = args
    if (timer === null) {
      timer = setTimeout(
        () => {
          timer = null
          const next = pending
          pending = null
          if (next) run(next)
        },
        Math.max(wait, 0),
      )
    }
  }
  throttled.cancel = (): void => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    pending = null
  }
  return throttled
}

/** Trailing debounce: runs once the calls stop for `ms` (slider drags, typing). */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): Throttled<A> {
  let timer: ReturnType<typeof setTimeout> | null = null
  const debounced = (...args: A): void => {
    if (timer !== null) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = null
      fn(...args)
    }, ms)
  }
  debounced.cancel = (): void => {
    if (timer !== null) clearTimeout(timer)
    timer = null
  }
  return debounced
}
