// The headless transport end to end: a real node:http server on a free loopback port, real fetch
// and raw node:http requests (for the Host header and unnormalized paths fetch would fix up).
// Here the static console and the Host header a DNS rebinding attack would send.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CONTENT_SECURITY_POLICY } from '../../../src/main/transport/security-headers'
import {
  INDEX_HTML,
  SECRET,
  base,
  dir,
  engine,
  raw,
  server,
  start,
  useHttpServer,
} from './http-server-harness'

useHttpServer()

describe('startHttpServer: static console', () => {
  it('serves index.html for / with the security headers', async () => {
    await start()
    const res = await fetch(`${base}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await res.text()).toBe(INDEX_HTML)
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
  })

  it('serves assets with their content types', async () => {
    await start()
    const js = await fetch(`${base}/assets/app.js`)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    const css = await fetch(`${base}/assets/app.css`)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404)
  })

  it.each([
    '/../secret.txt',
    '/assets/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/..%2fsecret.txt',
    '/assets/..%2f..%2fsecret.txt',
    '/%2e%2e%2fsecret.txt',
    '/..%5csecret.txt',
    `/${'..%2f'.repeat(12)}etc/passwd`,
    '/assets/%00../secret.txt',
    '/assets',
  ])('blocks directory traversal: %s', async (path) => {
    await start()
    const res = await raw(path)
    expect([400, 404]).toContain(res.status)
    expect(res.body).not.toContain(SECRET)
    expect(res.body).not.toContain('root:')
  })

  it('answers /favicon.ico with 204 when there is no icon, and serves the icon when given', async () => {
    await start()
    expect((await fetch(`${base}/favicon.ico`)).status).toBe(204)
    await server.close()
    await start({ faviconPath: join(dir, 'icon.png') })
    const res = await fetch(`${base}/favicon.ico`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
  })

  it('answers unknown /api routes with a 404 Reply', async () => {
    await start()
    const res = await fetch(`${base}/api/nothing`)
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'not_found' } })
  })
})

describe('startHttpServer: Host header (DNS rebinding)', () => {
  it('accepts 127.0.0.1, localhost and [::1] with the port', async () => {
    await start()
    for (const host of ['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST']) {
      const res = await raw('/', { Host: `${host}:${server.port}` })
      expect(res.status, host).toBe(200)
    }
  })

  it.each([
    'evil.example',
    'evil.example:PORT',
    '127.0.0.1',
    '127.0.0.1:1',
    'localhost.evil.example:PORT',
  ])('refuses Host %s with 403, on pages and on the API', async (hostTemplate) => {
    await start()
    const host = hostTemplate.replace('PORT', String(server.port))
    const page = await raw('/', { Host: host })
    expect(page.status).toBe(403)
    expect(page.body).not.toContain('Pacer')
    const events = await raw(`/api/events?token=${server.token}`, { Host: host })
    expect(events.status).toBe(403)
    expect(engine.listenerCount()).toBe(0)
  })

  it('bound for remote use, still refuses a Host that names no address bound here', async () => {
    await start({ host: '0.0.0.0', allowNonLoopback: true })
    const res = await raw(`/?token=${server.token}`, { Host: `pacer.example:${server.port}` })
    expect(res.status).toBe(403)
    const mine = await raw(`/?token=${server.token}`, { Host: `127.0.0.1:${server.port}` })
    expect(mine.status).toBe(200)
  })
})
