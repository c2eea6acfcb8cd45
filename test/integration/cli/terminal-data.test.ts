// Data printed by `pacer results` and `pacer export --out -`: answers are a provider's text and task
// types a batch file's, and either may carry ESC/OSC sequences (clear the screen, an OSC 8 link, an
// OSC 52 clipboard write), an 8-bit CSI or a bidi override. On a terminal (a real pty) they are
// shown escaped like everything else the CLI prints; to a pipe CSV stays byte for byte what a file
// holds, and JSONL is always valid JSON with C1 and bidi characters as \u escapes.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor } from '../../helpers/fake-vendor'
import { runPacerInPty } from '../../helpers/pty'

const ANSWER =
  'ok\u001b[2J\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007' +
  '\u001b]52;c;cHduZWQ=\u0007\u009b31m\u202eevil\u2066\u007f\rover'
const TYPE = 'classify\u001b]0;pwned\u0007'
/* eslint-disable no-control-regex -- what must not reach a terminal (LF aside) */
const RAW_CONTROL =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/
/* eslint-enable no-control-regex */
// What JSON.stringify passes raw.
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/

/** What a terminal shows once its line ends (LF sent as CRLF by the pty) are plain LF again. */
const screen = (output: string) => output.replace(/\r+\n/g, '\n')

let db = ''
let dir = ''

afterEach(closeVendors)

beforeAll(async () => {
  const server = await fakeVendor({ answer: () => ANSWER })
  dir = tempDir('pacer-terminal-data-')
  db = join(dir, 'pacer.db')
  await useVendor(db, server, {
    prices: { m: { input: 3, cachedInput: 3, cacheWrite: 3, output: 15 } },
  })
  const file = writeJsonl(dir, 'hostile.jsonl', [{ type: TYPE, payload: { prompt: 'say it' } }])
  const run = await runPacer([
    'run',
    file,
    '--db',
    db,
    '--provider',
    'openai-compatible',
    '--model',
    'm',
    '--json',
  ])
  expect(run.code, run.stderr).toBe(0)
  await server.close()
})

describe('data printed on a terminal', () => {
  it('pacer results --format csv shows ESC, OSC, C1 and bidi characters escaped', async () => {
    const r = await runPacerInPty(['results', '--db', db, '--format', 'csv'])
    expect(r.code, r.output).toBe(0)
    const shown = screen(r.output)
    expect(shown).not.toMatch(RAW_CONTROL)
    for (const escaped of [
      'ok\\u001b[2J',
      '\\u001b]8;;https://evil.example/\\u0007click',
      '\\u001b]52;c;cHduZWQ=\\u0007',
      '\\u009b31m\\u202eevil\\u2066\\u007f\\rover',
      'classify\\u001b]0;pwned\\u0007',
    ]) {
      expect(shown).toContain(escaped)
    }
    expect(shown).toContain('wrote 1 answer(s)')
  })

  it('pacer results (JSONL) shows no raw control, and each line still parses to the answer', async () => {
    const r = await runPacerInPty(['results', '--db', db])
    expect(r.code, r.output).toBe(0)
    const shown = screen(r.output)
    expect(shown).not.toMatch(RAW_CONTROL)
    const record = JSON.parse(shown.split('\n')[0]!) as { text: string; type: string }
    expect(record).toMatchObject({ text: ANSWER, type: TYPE })
  })

  it('pacer export --out - shows a hostile task type escaped', async () => {
    for (const kind of ['events', 'summary']) {
      const r = await runPacerInPty(['export', '--db', db, '--kind', kind, '--out', '-'])
      expect(r.code, r.output).toBe(0)
      const shown = screen(r.output)
      expect(shown).not.toMatch(RAW_CONTROL)
      expect(shown).toContain('classify\\u001b]0;pwned\\u0007')
    }
  })
})

describe('data to a pipe', () => {
  it('results and export CSV are byte for byte what a file holds, the answer exact', async () => {
    const file = join(dir, 'answers.csv')
    const toFile = await runPacer(['results', '--db', db, '--format', 'csv', '--out', file])
    expect(toFile.code, toFile.stderr).toBe(0)
    const piped = await runPacer(['results', '--db', db, '--format', 'csv'])
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stdout).toBe(readFileSync(file, 'utf8'))
    const [row] = parse(piped.stdout, { columns: true }) as { answer: string; type: string }[]
    expect(row).toMatchObject({ answer: ANSWER, type: TYPE })

    const events = join(dir, 'events.csv')
    expect((await runPacer(['export', '--db', db, '--out', events])).code).toBe(0)
    const exported = await runPacer(['export', '--db', db, '--out', '-'])
    expect(exported.stdout).toBe(readFileSync(events, 'utf8'))
    expect(exported.stdout).toContain(TYPE)
  })

  it('results JSONL has C1, DEL and bidi characters as \\u escapes, in a file too, losslessly', async () => {
    const file = join(dir, 'answers.jsonl')
    expect((await runPacer(['results', '--db', db, '--out', file])).code).toBe(0)
    const piped = await runPacer(['results', '--db', db])
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stdout).toBe(readFileSync(file, 'utf8'))
    expect(piped.stdout).not.toMatch(RAW_IN_JSON)
    expect(piped.stdout).toContain('\\u009b31m\\u202eevil\\u2066\\u007f\\rover')
    const record = JSON.parse(piped.stdout.trimEnd()) as { text: string; message: unknown }
    expect(record.text).toBe(ANSWER)
    expect(record.message).toEqual({ role: 'assistant', content: ANSWER })
  })
})
