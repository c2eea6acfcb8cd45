// What `pacer` prints and how it exits, tried with hostile files and broken databases: control
// characters from a file never reach the terminal raw, and every command follows one table of
// exit codes (cli/exit-codes.ts).
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runPacer, tempDir } from '../../helpers/cli'
import { fakeVendor } from '../../helpers/fake-vendor'

/** Clears the screen, then sets the terminal's title: what a hostile task type would do. */
const HOSTILE = 'x\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202e'
const ESCAPED = 'x\\u001b[2J\\u001b]0;pwned\\u0007\\u009b31m\\u202e'
// eslint-disable-next-line no-control-regex -- what must not reach a terminal
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/

function hostileBatch(dir: string): string {
  const file = join(dir, 'hostile.jsonl')
  writeFileSync(
    file,
    [
      JSON.stringify({ type: HOSTILE, payload: { n: 1 } }),
      JSON.stringify({ type: 'plain', payload: { n: 2 } }),
    ].join('\n') + '\n',
  )
  return file
}

describe('terminal-safe output', () => {
  it('a task type holding ESC sequences is shown escaped by run, summary, batches and forecast', async () => {
    const dir = tempDir()
    const file = hostileBatch(dir)
    const db = join(dir, 'p.db')
    const outputs = [
      await runPacer(['run', file, '--db', db, '--sim-latency-scale', '0']),
      await runPacer(['summary', '--db', db]),
      await runPacer(['batches', '--db', db]),
      await runPacer(['forecast', file, '--db', db]),
    ]
    for (const r of outputs) {
      expect(r.code).toBe(0)
      expect(r.stdout + r.stderr).not.toMatch(RAW_CONTROL)
    }
    expect(outputs[1]!.stdout).toContain(ESCAPED)
    expect(outputs[3]!.stdout).toContain(ESCAPED)
  })

  it('a bad line quoting ESC sequences is reported escaped, with its line number', async () => {
    const dir = tempDir()
    const file = join(dir, 'bad.jsonl')
    writeFileSync(
      file,
      `${JSON.stringify({ type: 'a', payload: 1 })}\n${JSON.stringify({ type: 'a', payload: 2, provider: HOSTILE })}\n`,
    )
    const r = await runPacer(['run', file, '--db', join(dir, 'p.db')])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/bad\.jsonl:2: provider: unknown provider/)
    expect(r.stderr).toContain(ESCAPED)
    expect(r.stderr).not.toMatch(RAW_CONTROL)
  })

  it('an unknown option quoting ESC sequences is echoed escaped', async () => {
    const r = await runPacer(['summary', `--${HOSTILE}`])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('unknown option')
    expect(r.stderr).not.toMatch(RAW_CONTROL)
  })
})

describe('exit codes', () => {
  it('--help lists the table', async () => {
    const r = await runPacer(['--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(
      /Exit codes:\n\s+0\s+done\n\s+1\s+.*failed.*\n\s+2\s+bad usage or input.*\n\s+3\s+the database or the disk.*\n\s+4\s+stopped by a setup failure.*\n.*\n\s+5\s+stopped by a spend cap.*\n.*\n\s+130\s+interrupted/,
    )
  })

  it.each([
    [
      'a database path that cannot be created',
      (dir: string) => {
        const locked = join(dir, 'locked')
        writeFileSync(locked, 'a file, not a folder')
        chmodSync(locked, 0o444)
        return join(locked, 'sub', 'pacer.db')
      },
      /cannot open database at .*locked/,
    ],
    [
      'a file that is not a database',
      (dir: string) => {
        const path = join(dir, 'notes.db')
        writeFileSync(path, 'these are my notes, not a database\n'.repeat(200))
        return path
      },
      /cannot open database at .*notes\.db: file is not a database/,
    ],
  ])('%s: one line and exit 3, from run and from summary', async (_name, dbOf, message) => {
    const dir = tempDir()
    const db = dbOf(dir)
    const batch = join(dir, 'ok.jsonl')
    writeFileSync(batch, `${JSON.stringify({ type: 'a', payload: 1 })}\n`)
    for (const args of [
      ['run', batch, '--db', db],
      ['summary', '--db', db],
    ]) {
      const r = await runPacer(args)
      if (args[0] === 'summary' && _name.startsWith('a database path')) {
        // Nothing there to read: that is a usage error (a mistyped --db), as before.
        expect(r.code).toBe(2)
        continue
      }
      expect(r.code).toBe(3)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(message)
      expect(r.stderr).not.toMatch(/\n\s+at /)
    }
  })

  it('bad input exits 2 and queues nothing', async () => {
    const dir = tempDir()
    const db = join(dir, 'p.db')
    const bad = join(dir, 'bad.jsonl')
    writeFileSync(bad, '{"type": "a", "payload": 1}\n{not json\n')
    const r2 = await runPacer(['run', bad, '--db', db])
    expect(r2.code).toBe(2)
    expect(r2.stderr).toMatch(/bad\.jsonl:2: not valid JSON/)
    expect(r2.stderr).toMatch(/nothing was queued/)
  })

  it('a run whose tasks the provider refuses (HTTP 400) ends with exit 1', async () => {
    const vendor = await fakeVendor({
      answer: () => ({
        status: 400,
        body: { error: { message: 'bad request', type: 'invalid_request_error' } },
      }),
    })
    try {
      const dir = tempDir()
      const file = join(dir, 'b.jsonl')
      writeFileSync(file, `${JSON.stringify({ type: 'a', payload: 1 })}\n`)
      const r = await runPacer(
        [
          'run',
          file,
          '--db',
          join(dir, 'p.db'),
          '--provider',
          'openai',
          '--model',
          'gpt-4o',
          '--base-url',
          vendor.baseUrl,
        ],
        { OPENAI_API_KEY: 'sk-test-0123456789' },
      )
      expect(r.stderr).toMatch(/failed 1/)
      expect(r.code).toBe(1)
    } finally {
      await vendor.close()
    }
  })
})
