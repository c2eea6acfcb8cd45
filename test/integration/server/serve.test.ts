// `pacer serve` as started from the command line: loopback only, token required, Host checked.
import { request } from 'node:http'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runPacer, startPacer, tempDir, until } from '../../helpers/cli'

function get(url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('pacer serve', () => {
  it('an explicit --host 127.0.0.1 keeps the DNS-rebinding guard; the token is required', async () => {
    const db = join(tempDir(), 'p.db')
    const server = startPacer(['serve', '--db', db, '--port', '0', '--host', '127.0.0.1'])
    try {
      const url = new URL(
        await until(() => /Pacer console: (\S+)/.exec(server.output().stdout)?.[1], 30_000),
      )
      const token = url.searchParams.get('token')!
      const events = new URL(`/api/events?token=${token}`, url)
      expect(await get(new URL('/', url), { host: 'attacker.example' })).toBe(403)
      expect(await get(new URL('/api/events', url), {})).toBe(401)
      const res = await fetch(new URL('/api/commands/batches:list', url), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ ok: true, value: [] })
      expect(events.host).toBe(url.host)
    } finally {
      server.child.kill('SIGINT')
      const done = await server.done
      expect(done.code).toBe(0)
    }
  })

  it('an address that cannot be bound: one clear line and exit 2', async () => {
    const r = await runPacer([
      'serve',
      '--db',
      join(tempDir(), 'p.db'),
      '--host',
      'not-an-ip.invalid',
      '--allow-remote',
    ])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })

  it.each([
    ['""', '', /--host "": an empty address listens on every interface/],
    ['0.0.0.0', '0.0.0.0', /--host 0\.0\.0\.0: not a loopback address.*--allow-remote/],
    ['a LAN address', '192.168.77.5', /--host 192\.168\.77\.5: not a loopback address/],
  ])('--host %s without --allow-remote: refused in one line, exit 2', async (_n, host, message) => {
    const r = await runPacer(['serve', '--db', join(tempDir(), 'p.db'), '--host', host])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(message)
  })

  it('--host 0.0.0.0 --allow-remote: a warning, the token on every request, Host still checked', async () => {
    const db = join(tempDir(), 'p.db')
    const server = startPacer(['serve', '--db', db, '--host', '0.0.0.0', '--allow-remote'])
    try {
      const url = new URL(
        await until(() => /Pacer console: (\S+)/.exec(server.output().stdout)?.[1], 30_000),
      )
      expect(server.output().stderr).toMatch(/warning: listening on 0\.0\.0\.0: other machines/)
      const token = url.searchParams.get('token')!
      const origin = `http://127.0.0.1:${url.port}`
      // The page itself needs the token now; with it, the page keeps it as an HttpOnly cookie.
      expect((await fetch(`${origin}/`)).status).toBe(401)
      const page = await fetch(`${origin}/?token=${token}`)
      expect(page.status).toBe(200)
      const cookie = page.headers.get('set-cookie')!
      expect(cookie).toMatch(/^pacer_session=[0-9a-f]+; HttpOnly; SameSite=Strict; Path=\/$/)
      const html = await page.text()
      const asset = /src="\.?(\/assets\/[^"]+)"/.exec(html)![1]!
      expect((await fetch(`${origin}${asset}`)).status).toBe(401)
      const withCookie = await fetch(`${origin}${asset}`, {
        headers: { cookie: cookie.split(';')[0]! },
      })
      expect(withCookie.status).toBe(200)
      expect(
        (
          await fetch(`${origin}${asset}`, {
            headers: { cookie: 'pacer_session=0123456789abcdef0123' },
          })
        ).status,
      ).toBe(401)
      // A name that is no address bound here is still refused (DNS rebinding), token or not.
      expect(
        await get(new URL(`/?token=${token}`, origin), { host: `attacker.example:${url.port}` }),
      ).toBe(403)
    } finally {
      server.child.kill('SIGINT')
      expect((await server.done).code).toBe(0)
    }
  })
})
