/**
 * Quitting cleanly: `before-quit` is cancelled once, the engine drains (running calls finish or
 * release their claims, the ledger is flushed, the database closed), then the app quits for real.
 * Without this an operator's Cmd+Q would leave claims leased until they expire.
 */

export interface QuittableAppLike {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown
  quit(): void
}

export interface GracefulQuitOptions {
  /** How long running calls may take to finish. */
  graceMs: number
  /** Extra time after graceMs before quitting regardless (a hung shutdown must not hang the app). */
  hardLimitMs?: number
}

/** Installs the before-quit handler; `shutdown` runs at most once. */
export function installGracefulQuit(
  app: QuittableAppLike,
  shutdown: (opts: { graceMs: number }) => Promise<void>,
  options: GracefulQuitOptions,
): void {
  let state: 'running' | 'draining' | 'done' = 'running'
  app.on('before-quit', (event) => {
    if (state === 'done') return
    event.preventDefault()
    if (state === 'draining') return
    state = 'draining'
    const finish = () => {
      if (state === 'done') return
      state = 'done'
      clearTimeout(timer)
      app.quit()
    }
    const timer = setTimeout(
      () => {
        console.error('pacer: shutdown took too long; quitting anyway')
        finish()
      },
      options.graceMs + (options.hardLimitMs ?? 3000),
    )
    shutdown({ graceMs: options.graceMs }).then(finish, (err: unknown) => {
      console.error('pacer: shutdown failed:', err)
      finish()
    })
  })
}
