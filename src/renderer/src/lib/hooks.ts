import { useEffect, useRef } from 'react'
import { debounce } from './timing'

/**
 * A debounced callback that always calls the latest `fn` (so it sees current props) and is
 * cancelled on unmount, so a slider released just before its panel closes still sends nothing late.
 */
export function useDebouncedCallback<A extends unknown[]>(
  fn: (...args: A) => void,
  ms: number,
): ((...args: A) => void) & { cancel(): void } {
  const latest = useRef(fn)
  useEffect(() => {
    latest.current = fn
  }, [fn])
  const debounced = useRef<ReturnType<typeof debounce<A>> | null>(null)
  useEffect(() => () => debounced.current?.cancel(), [])
  const call = (...args: A): void => {
    debounced.current ??= debounce<A>((...a) => latest.current(...a), ms)
    debounced.current(...args)
  }
  call.cancel = (): void => debounced.current?.cancel()
  return call
}
