/**
 * The console window's options and the session hardening around it, with no Electron import at
 * run time (types only) so the security settings are unit-tested as plain data.
 */
import type { BrowserWindowConstructorOptions } from 'electron'

export {
  CONTENT_SECURITY_POLICY,
  META_CONTENT_SECURITY_POLICY,
  devContentSecurityPolicy,
} from '../transport/security-headers'

/** The console window. Shown on `ready-to-show`, so it never flashes an empty frame. */
export function createWindowOptions(
  preloadPath: string,
  extra: { icon?: string } = {},
): BrowserWindowConstructorOptions {
  return {
    width: 1360,
    height: 860,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'Pacer',
    ...(extra.icon ? { icon: extra.icon } : {}),
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      // Tables of numbers and task types: red squiggles help nobody.
      spellcheck: false,
    },
  }
}

type Headers = Record<string, string | string[]>

/** The response headers with any CSP the server sent replaced by `policy`. */
export function withContentSecurityPolicy(
  headers: Record<string, string[]> | undefined,
  policy: string,
): Headers {
  const out: Headers = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    // Header names arrive in any case; a second, laxer CSP would be ANDed, a stale one confusing.
    if (name.toLowerCase() !== 'content-security-policy') out[name] = value
  }
  out['Content-Security-Policy'] = [policy]
  return out
}

/** The slice of Electron's Session this module needs (so tests pass a fake). */
export interface SessionLike {
  webRequest: {
    onHeadersReceived(
      listener: (
        details: { url: string; responseHeaders?: Record<string, string[]> },
        callback: (response: { responseHeaders?: Headers; cancel?: boolean }) => void,
      ) => void,
    ): void
  }
  setPermissionRequestHandler(
    handler: (
      webContents: unknown,
      permission: string,
      callback: (granted: boolean) => void,
    ) => void,
  ): void
  setPermissionCheckHandler(handler: (webContents: unknown, permission: string) => boolean): void
}

// Copy buttons use navigator.clipboard.writeText; nothing else (camera, notifications, geolocation,
// midi, HID...) has a use in the console.
const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write'])

/**
 * Stamps the CSP header on the console's responses (the dev server's; file:// has no headers, so
 * index.html's meta tag covers the packaged page) and denies every permission request.
 */
export function hardenSession(
  session: SessionLike,
  options: { isAppUrl(url: string): boolean; policy: string },
): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    if (!options.isAppUrl(details.url)) {
      callback({})
      return
    }
    callback({
      responseHeaders: withContentSecurityPolicy(details.responseHeaders, options.policy),
    })
  })
  session.setPermissionRequestHandler((_contents, permission, callback) =>
    callback(ALLOWED_PERMISSIONS.has(permission)),
  )
  session.setPermissionCheckHandler((_contents, permission) => ALLOWED_PERMISSIONS.has(permission))
}
