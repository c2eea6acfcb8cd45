/**
 * The only door from the console to the rest of the OS: opening a link in the user's browser.
 * `shell.openExternal` hands a URL to the OS, which will happily run `file:`, `smb:`, `ms-msdt:` or
 * any registered custom scheme, so every URL goes through `isSafeExternalUrl` first (ESLint forbids
 * `shell.openExternal` everywhere but here). Pure predicates, no Electron import.
 *
 * Decision: https only. No plain http, not even loopback: nothing in the console needs it, and a
 * GET to http://localhost:<port> from the user's real browser (with its cookies) is a request
 * forgery against local services (routers, Docker, dev servers). Provider and pricing docs are https.
 */

const MAX_URL_LENGTH = 2048

/** True only for a well-formed `https://host/...` URL without credentials. */
export function isSafeExternalUrl(url: unknown): url is string {
  if (typeof url !== 'string' || url.length === 0 || url.length > MAX_URL_LENGTH) return false
  // Require the literal prefix: the WHATWG parser accepts `https:host`, `https:\\host` and
  // leading spaces and fixes them up, and an OS handler might not parse them the same way.
  if (!/^https:\/\/[^/\\]/i.test(url)) return false
  // Whitespace, control characters and backslashes have no place in a link we hand to the OS.
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f\\]/.test(url)) return false
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return false
  }
  if (parsed.protocol !== 'https:') return false
  // `https://user:pass@host` phishes (`https://bank.com@evil.example`) and leaks secrets to logs.
  if (parsed.username !== '' || parsed.password !== '') return false
  if (parsed.hostname === '' || parsed.hostname === '.') return false
  return true
}

/** The subset of Electron's `shell` used here. */
export interface ShellLike {
  openExternal(url: string): Promise<void>
}

/**
 * Opens `url` in the OS browser if it is safe; resolves whether it did. Hands the OS the parsed,
 * normalized URL, not the raw string.
 */
export async function openExternalSafely(shell: ShellLike, url: unknown): Promise<boolean> {
  if (!isSafeExternalUrl(url)) return false
  try {
    await shell.openExternal(new URL(url).href)
    return true
  } catch (err) {
    console.error('pacer: could not open an external link:', (err as Error).message)
    return false
  }
}

export type NavigationDecision = 'allow' | 'open-external' | 'deny'

/** Navigation inside the window stays inside the console; safe links go to the OS browser. */
export function decideNavigation(
  url: string,
  isAppUrl: (url: string) => boolean,
): NavigationDecision {
  if (isAppUrl(url)) return 'allow'
  return isSafeExternalUrl(url) ? 'open-external' : 'deny'
}

/** The slice of a WebContents that navigation guarding needs. */
export interface NavigableContentsLike {
  on(
    event: 'will-navigate' | 'will-redirect',
    listener: (event: { preventDefault(): void; url?: string }, url: string) => void,
  ): unknown
  on(event: 'will-attach-webview', listener: (event: { preventDefault(): void }) => void): unknown
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void
}

/**
 * Pins a WebContents to the console: navigations away are cancelled (a safe link opens in the OS
 * browser instead), new windows are never created, and `<webview>` is refused even if re-enabled.
 */
export function guardNavigation(
  contents: NavigableContentsLike,
  options: { isAppUrl(url: string): boolean; shell: ShellLike },
): void {
  const onNavigate = (event: { preventDefault(): void; url?: string }, legacyUrl: string) => {
    const url = typeof event.url === 'string' ? event.url : legacyUrl
    const decision = decideNavigation(url, options.isAppUrl)
    if (decision === 'allow') return
    event.preventDefault()
    if (decision === 'open-external') void openExternalSafely(options.shell, url)
  }
  contents.on('will-navigate', onNavigate)
  contents.on('will-redirect', (event, legacyUrl) => {
    const url = typeof event.url === 'string' ? event.url : legacyUrl
    // A redirect is never a user's click: cancel anything that leaves the console, open nothing.
    if (!options.isAppUrl(url)) event.preventDefault()
  })
  contents.on('will-attach-webview', (event) => event.preventDefault())
  contents.setWindowOpenHandler(({ url }) => {
    if (isSafeExternalUrl(url)) void openExternalSafely(options.shell, url)
    return { action: 'deny' }
  })
}
