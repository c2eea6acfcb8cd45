// Issue 11, exact input, through a real `pacer run` against a loopback OpenAI-speaking server:
// numbers reach the provider with the digits the file has, tasks that differ in a digit stay two
// tasks, and a file with bytes that are not UTF-8 is refused with the line and byte of each.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { query, runPacer, tempDir } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor, vendorEnv } from '../../helpers/fake-vendor'

afterEach(closeVendors)

async function setup() {
  const server = await fakeVendor({ dialect: 'openai' })
  const dir = tempDir('pacer-exact-')
  const db = join(dir, 'pacer.db')
  await useVendor(db, server, { provider: 'openai' })
  return { server, dir, db }
}

const RUN = ['--provider', 'openai', '--model', 'gpt-4o-mini', '--json']

describe('exact input through pacer run', () => {
  it('sends every digit: bigints, 1e-400 and params a double cannot hold stay apart', async () => {
    const { server, dir, db } = await setup()
    const file = join(dir, 'batch.jsonl')
    // Written by hand: JSON.stringify could not write these numbers.
    writeFileSync(
      file,
      [
        '{"type":"t","payload":{"id":9007199254740993}}',
        '{"type":"t","payload":{"id":9007199254740992}}',
        '{"type":"t","payload":{"x":1e-400}}',
        '{"type":"t","payload":{"x":0}}',
        '{"type":"t","payload":{"prompt":"p-exact"},"params":{"temperature":0.70000000000000001,"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"maximum":18446744073709551617}}}}}',
        '',
      ].join('\n'),
    )
    const run = await runPacer(['run', file, '--db', db, ...RUN], vendorEnv('openai', server))
    expect(run.code, run.stderr).toBe(0)
    expect(server.requests).toHaveLength(5)
    const raws = server.requests.map((r) => r.raw)
    const sentWith = (digits: string) => raws.filter((raw) => raw.includes(digits))
    expect(sentWith('{\\"id\\":9007199254740993}')).toHaveLength(1)
    expect(sentWith('{\\"id\\":9007199254740992}')).toHaveLength(1)
    expect(sentWith('{\\"x\\":1e-400}')).toHaveLength(1)
    expect(sentWith('{\\"x\\":0}')).toHaveLength(1)
    const withParams = sentWith('p-exact')
    expect(withParams).toHaveLength(1)
    expect(withParams[0]).toContain('"temperature":0.70000000000000001')
    expect(withParams[0]).toContain('"maximum":18446744073709551617')
    // Stored as written, each its own task.
    const stored = query<{ payload: string }>(db, 'SELECT payload FROM tasks ORDER BY seq')
    expect(stored.map((r) => r.payload).slice(0, 4)).toEqual([
      '{"id":9007199254740993}',
      '{"id":9007199254740992}',
      '{"x":1e-400}',
      '{"x":0}',
    ])
  })

  it('refuses caf\\xe9 and caf\\xe8 with their line and byte, and queues nothing', async () => {
    const { server, dir, db } = await setup()
    const file = join(dir, 'latin1.jsonl')
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from('{"type":"t","payload":"café"}\n'),
        Buffer.from(
          '{"type":"t","payload":"caf\xe9"}\n{"type":"t","payload":"caf\xe8"}\n',
          'latin1',
        ),
      ]),
    )
    const run = await runPacer(['run', file, '--db', db, ...RUN], vendorEnv('openai', server))
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`${file}:2: byte 27: invalid UTF-8 (0xE9): save the file as UTF-8`)
    expect(run.stderr).toContain(`${file}:3: byte 27: invalid UTF-8 (0xE8): save the file as UTF-8`)
    expect(run.stderr).toContain('2 invalid line(s); nothing was queued')
    expect(server.requests).toHaveLength(0)
  })
})
