// `pacer serve` as started from the command line: loopback only, token required, Host checked.
import { request } from 'node:http'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runPacer, startPacer, tempDir, until } from '../helpers/cli'

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
    ])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })
})
