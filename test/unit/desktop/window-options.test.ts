import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it, vi } from 'vitest'

vi.mock('electron', () => ({}))

import { createAppUrlMatcher } from '../../../src/main/desktop/app-url'
import {
  CONTENT_SECURITY_POLICY,
  META_CONTENT_SECURITY_POLICY,
  devContentSecurityPolicy,
  createWindowOptions,
  hardenSession,
  withContentSecurityPolicy,
  type SessionLike,
} from '../../../src/main/desktop/window-options'

describe('createWindowOptions', () => {
  const options = createWindowOptions('/app/out/preload/index.js')
  const web = options.webPreferences!

  it('isolates and sandboxes the renderer, with no Node integration anywhere', () => {
    expect(web.preload).toBe('/app/out/preload/index.js')
    expect(web.contextIsolation).toBe(true)
    expect(web.sandbox).toBe(true)
    expect(web.nodeIntegration).toBe(false)
    expect(web.nodeIntegrationInWorker).toBe(false)
    expect(web.nodeIntegrationInSubFrames).toBe(false)
  })

  it('keeps web security on and webviews off', () => {
    expect(web.webSecurity).toBe(true)
    expect(web.allowRunningInsecureContent).toBe(false)
    expect(web.webviewTag).toBe(false)
  })

  it('stays hidden until ready-to-show and opens at a usable size', () => {
    expect(options.show).toBe(false)
    expect(options.width).toBeGreaterThanOrEqual(1024)
    expect(options.height).toBeGreaterThanOrEqual(700)
    expect(options.minWidth).toBeGreaterThanOrEqual(800)
  })

  it('sets an icon only when given one', () => {
    expect('icon' in options).toBe(false)
    expect(createWindowOptions('/p.js', { icon: '/i.png' }).icon).toBe('/i.png')
  })
})

describe('Content-Security-Policy', () => {
  it('is strict: self-only scripts, no objects, no base, no framing', () => {
    const directives = Object.fromEntries(
      CONTENT_SECURITY_POLICY.split('; ').map((d) => {
        const [name, ...values] = d.split(' ')
        return [name, values.join(' ')]
      }),
    )
    expect(directives).toEqual({
      'default-src': "'self'",
      'script-src': "'self'",
      'style-src': "'self' 'unsafe-inline'",
      'img-src': "'self' data:",
      'connect-src': "'self'",
      'object-src': "'none'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    })
  })

  it('matches the meta tag in src/renderer/index.html (minus header-only directives)', () => {
    const html = readFileSync(join(__dirname, '../../../src/renderer/index.html'), 'utf8')
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)
    expect(meta?.[1]).toBe(META_CONTENT_SECURITY_POLICY)
    expect(META_CONTENT_SECURITY_POLICY).not.toContain('frame-ancestors')
  })

  it('relaxes only script-src (React Refresh) and connect-src (HMR socket) for the dev server', () => {
    expect(devContentSecurityPolicy('http://localhost:5173/')).toBe(
      CONTENT_SECURITY_POLICY.replace(
        "script-src 'self'",
        "script-src 'self' 'unsafe-inline'",
      ).replace("connect-src 'self'", "connect-src 'self' ws://localhost:5173"),
    )
  })

  it('replaces any CSP header the server sent, whatever its case', () => {
    const out = withContentSecurityPolicy(
      {
        'content-security-policy': ['default-src *'],
        'CONTENT-SECURITY-POLICY': ["script-src * 'unsafe-eval'"],
        'Content-Type': ['text/html'],
      },
      CONTENT_SECURITY_POLICY,
    )
    expect(out).toEqual({
      'Content-Type': ['text/html'],
      'Content-Security-Policy': [CONTENT_SECURITY_POLICY],
    })
  })
})

function fakeSession() {
  let headersListener: Parameters<SessionLike['webRequest']['onHeadersReceived']>[0] | null = null
  let requestHandler: Parameters<SessionLike['setPermissionRequestHandler']>[0] | null = null
  let checkHandler: Parameters<SessionLike['setPermissionCheckHandler']>[0] | null = null
  const session: SessionLike = {
    webRequest: { onHeadersReceived: (l) => (headersListener = l) },
    setPermissionRequestHandler: (h) => (requestHandler = h),
    setPermissionCheckHandler: (h) => (checkHandler = h),
  }
  const respond = (url: string, responseHeaders?: Record<string, string[]>) => {
    let answer: unknown
    headersListener!({ url, responseHeaders }, (response) => (answer = response))
    return answer as { responseHeaders?: Record<string, string[]> }
  }
  const ask = (permission: string) => {
    let granted: boolean | undefined
    requestHandler!(null, permission, (g) => (granted = g))
    return granted
  }
  return { session, respond, ask, check: (p: string) => checkHandler!(null, p) }
}

describe('hardenSession', () => {
  const rendererDir = '/opt/pacer/out/renderer'
  const isAppUrl = createAppUrlMatcher({ rendererDir, devServerUrl: 'http://localhost:5173' })

  it('applies the CSP header to the console responses', () => {
    const { session, respond } = fakeSession()
    hardenSession(session, { isAppUrl, policy: CONTENT_SECURITY_POLICY })
    const answer = respond('http://localhost:5173/src/main.tsx', {
      'Content-Type': ['text/javascript'],
    })
    expect(answer.responseHeaders?.['Content-Security-Policy']).toEqual([CONTENT_SECURITY_POLICY])
    expect(answer.responseHeaders?.['Content-Type']).toEqual(['text/javascript'])
  })

  it('leaves other responses untouched', () => {
    const { session, respond } = fakeSession()
    hardenSession(session, { isAppUrl, policy: CONTENT_SECURITY_POLICY })
    expect(respond('https://example.com/', { a: ['b'] })).toEqual({})
  })

  it('denies permission requests and checks (camera, notifications, ...) but clipboard writes', () => {
    const { session, ask, check } = fakeSession()
    hardenSession(session, { isAppUrl, policy: CONTENT_SECURITY_POLICY })
    for (const p of [
      'media',
      'notifications',
      'geolocation',
      'openExternal',
      'hid',
      'clipboard-read',
    ]) {
      expect(ask(p), p).toBe(false)
      expect(check(p), p).toBe(false)
    }
    expect(ask('clipboard-sanitized-write')).toBe(true)
  })
})

describe('createAppUrlMatcher', () => {
  const rendererDir = join('/opt/pacer/out/renderer')
  const index = pathToFileURL(join(rendererDir, 'index.html')).href

  it.each([
    [index, true],
    [`${index}#/queue`, true],
    [pathToFileURL(join(rendererDir, 'assets/index-abc.js')).href, true],
    ['file:///opt/pacer/out/renderer', false],
    ['file:///opt/pacer/out/renderer-evil/index.html', false],
    ['file:///opt/pacer/out/main/index.js', false],
    ['file:///etc/passwd', false],
    ['file://remote-host/opt/pacer/out/renderer/index.html', false],
    ['http://localhost:5173/', false],
    ['https://example.com/', false],
    ['not a url', false],
  ])('without a dev server: %s -> %s', (url, expected) => {
    expect(createAppUrlMatcher({ rendererDir })(url)).toBe(expected)
  })

  it('trusts the dev server origin only when one is configured, and only on loopback', () => {
    const dev = createAppUrlMatcher({ rendererDir, devServerUrl: 'http://localhost:5173/' })
    expect(dev('http://localhost:5173/')).toBe(true)
    expect(dev('http://localhost:5173/src/main.tsx')).toBe(true)
    expect(dev('http://localhost:5174/')).toBe(false)
    expect(dev('http://127.0.0.1:5173/')).toBe(false)
    const remote = createAppUrlMatcher({ rendererDir, devServerUrl: 'http://evil.example:5173/' })
    expect(remote('http://evil.example:5173/')).toBe(false)
  })
})
