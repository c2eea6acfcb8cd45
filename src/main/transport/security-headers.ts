/**
 * The console's Content-Security-Policy and the other security headers, defined once for the
 * three places that enforce them: the Electron session (response header), the headless HTTP server
 * (response header) and src/renderer/index.html (meta tag, for the packaged file:// page, which
 * has no response headers). Pure: no Electron, no Node APIs.
 */

/**
 * `style-src 'unsafe-inline'`: React `style={...}` props and uPlot set inline styles; scripts stay
 * strict. `form-action 'none'`: a form that forgot preventDefault must not navigate the console
 * away. `frame-ancestors` only works as a header (browsers ignore it in a meta tag and warn).
 */
const DIRECTIVES: readonly (readonly [string, string])[] = [
  ['default-src', "'self'"],
  ['script-src', "'self'"],
  ['style-src', "'self' 'unsafe-inline'"],
  ['img-src', "'self' data:"],
  ['connect-src', "'self'"],
  ['object-src', "'none'"],
  ['base-uri', "'none'"],
  ['form-action', "'none'"],
  ['frame-ancestors', "'none'"],
]

const HEADER_ONLY = new Set(['frame-ancestors'])

function serialize(directives: readonly (readonly [string, string])[]): string {
  return directives.map(([name, value]) => `${name} ${value}`).join('; ')
}

/** The policy sent as a response header (Electron session and `pacer serve`). */
export const CONTENT_SECURITY_POLICY = serialize(DIRECTIVES)

/** The same policy minus the directives a `<meta>` tag cannot carry; index.html must equal it. */
export const META_CONTENT_SECURITY_POLICY = serialize(
  DIRECTIVES.filter(([name]) => !HEADER_ONLY.has(name)),
)

/**
 * The header policy for the electron-vite dev server only (`devServerUrl`, a loopback URL):
 * @vitejs/plugin-react injects an inline `<script type="module">` (the React Refresh preamble)
 * that a `script-src 'self'` header blocks — every component then throws "can't detect preamble",
 * a blank window (checked in Chromium against the real dev server). The HMR WebSocket is named
 * explicitly rather than trusted to match 'self'. The meta tag can stay strict: Vite puts the
 * preamble first in <head>, before the tag takes effect. Never used for the built console.
 */
export function devContentSecurityPolicy(devServerUrl: string): string {
  const dev = new URL(devServerUrl)
  const ws = `${dev.protocol === 'https:' ? 'wss:' : 'ws:'}//${dev.host}`
  return serialize(
    DIRECTIVES.map(([name, value]) => {
      if (name === 'script-src') return [name, `${value} 'unsafe-inline'`] as const
      if (name === 'connect-src') return [name, `${value} ${ws}`] as const
      return [name, value] as const
    }),
  )
}

/**
 * Headers on every response of the headless server. `Referrer-Policy: no-referrer` matters more
 * than usual: the first page load carries the session token in its URL.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=()',
})
