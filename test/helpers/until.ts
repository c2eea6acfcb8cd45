/**
 * Polls until `check` returns a truthy value and returns it; throws after `timeoutMs`. The one
 * condition wait of the test suite: the bound is generous on purpose (a busy 2-core machine), so a
 * test waits on what it means, never on a margin of milliseconds.
 */
export async function until<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const v = await check()
      if (v) return v
    } catch (err) {
      // the condition may not be checkable yet (a database not created, a server not listening)
      lastError = err
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: last error ${lastError.message}` : ''
      throw new Error(`condition not met within ${timeoutMs} ms${why}`)
    }
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
