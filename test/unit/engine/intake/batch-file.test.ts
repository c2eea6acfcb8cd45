import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { LineError } from '../../../../src/shared/contract'
import {
  memoryKeys,
  parseBatchFile,
  readBatchRows,
  TaskValidator,
  type ParsedTask,
} from '../../../../src/main/engine/intake/batch-file'
import { fingerprint } from '../../../../src/main/engine/core/fingerprint'

describe('batch files', () => {
  it('reads JSONL with CRLF, a BOM, blank lines and comments', () => {
    const text =
      '\uFEFF{"type":"a","payload":{"x":1}}\r\n\r\n// a comment\r\n{"type":"b","payload":2,"steps":3}\r\n'
    const { tasks, errors } = parseBatchFile(text, 'jsonl')
    expect(errors).toEqual([])
    expect(tasks.map((t) => [t.line, t.type, t.steps])).toEqual([
      [1, 'a', 1],
      [4, 'b', 3],
    ])
    expect(tasks[0]!.fp).toBe(fingerprint('a', { x: 1 }))
  })

  it('lists every bad line with its field, and keeps the good ones', () => {
    const text = [
      '{"type":"a","payload":1}',
      '[1,2]',
      '{"type":"","payload":1}',
      // Valid JSON, but half of a surrogate pair is not text (1e999 is now read as written).
      '{"type":"a","payload":{"deep":"\\ud800"}}',
      '{"type":"a"}',
    ].join('\n')
    const { tasks, errors } = parseBatchFile(text, 'jsonl')
    expect(tasks).toHaveLength(1)
    expect(errors.map((e) => [e.line, e.field])).toEqual([
      [2, undefined],
      [3, 'type'],
      [4, 'payload.deep'],
      [5, 'payload'],
    ])
  })

  it('refuses a key reused with another payload, naming both lines', () => {
    const text = ['{"type":"a","key":"k","payload":1}', '{"type":"a","key":"k","payload":2}'].join(
      '\n',
    )
    const { errors } = parseBatchFile(text, 'jsonl')
    expect(errors).toEqual([
      expect.objectContaining({ line: 2, field: 'key', message: expect.stringMatching(/line 1/) }),
    ])
  })

  it('reads CSV with quoted commas and newlines, reporting physical line numbers', () => {
    const text = [
      'type,payload,steps',
      'a,"{""text"":""x, y""}",2',
      'b,"{""text"":',
      '""two lines""}",1',
      'c,not json,1',
    ].join('\n')
    const { tasks, errors } = parseBatchFile(text, 'csv')
    expect(tasks.map((t) => t.type)).toEqual(['a', 'b'])
    expect(tasks[1]!.payload).toEqual({ text: 'two lines' })
    expect(errors).toEqual([expect.objectContaining({ line: 5, field: 'payload' })])
  })

  it('refuses a CSV row with more fields than the header, and accepts one with fewer', () => {
    const text = [
      'type,payload',
      'q,"{""a"":1}",toomany',
      'r,"{""a"":2}"',
      's,"{""a"":3}",,',
      'only-type',
      't,"{""a"":',
      '4}",extra',
    ].join('\n')
    const { tasks, errors } = parseBatchFile(text, 'csv')
    expect(tasks.map((t) => [t.line, t.type])).toEqual([[3, 'r']])
    expect(errors).toEqual([
      { line: 2, message: '3 fields, but the header names 2 columns' },
      { line: 4, message: '4 fields, but the header names 2 columns' },
      expect.objectContaining({ line: 5, field: 'payload' }),
      { line: 7, message: '3 fields, but the header names 2 columns' },
    ])
    // Optional columns may be left out at the end of a row.
    const short = parseBatchFile('type,payload,steps,key\na,1\nb,2,3\n', 'csv')
    expect(short.errors).toEqual([])
    expect(short.tasks.map((t) => [t.type, t.steps])).toEqual([
      ['a', 1],
      ['b', 3],
    ])
  })

  it('a CSV without the required columns says which', () => {
    const { errors } = parseBatchFile('kind,prompt\na,b\n', 'csv')
    expect(errors[0]!.message).toMatch(/type and payload required.*unknown: kind, prompt/)
  })

  it('an empty file is one error', () => {
    expect(parseBatchFile(' \n\n', 'jsonl').errors).toEqual([
      { line: 1, message: 'the file is empty: no tasks' },
    ])
  })

  it('a hostile, deeply nested payload is an error, not a crash', () => {
    const deep = '{"type":"a","payload":' + '['.repeat(5000) + ']'.repeat(5000) + '}'
    const { errors } = parseBatchFile(deep, 'jsonl')
    expect(errors[0]!.message).toMatch(/nested deeper than 256 levels/)
  })
})

describe('readBatchRows: the same file streamed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pacer-rows-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  /** The tasks and errors of `text` read from a file, as parseBatchFile gives them in memory. */
  async function streamedParse(text: string, format: 'jsonl' | 'csv') {
    const path = join(dir, `f-${Math.random().toString(36).slice(2)}.${format}`)
    writeFileSync(path, text)
    const tasks: ParsedTask[] = []
    const errors: LineError[] = []
    const validator = new TaskValidator(memoryKeys())
    let read = 0
    for await (const rows of readBatchRows(path, format, (c) => (read += c.length))) {
      for (const row of rows) {
        const task = validator.accept(row, errors)
        if (task) tasks.push(task)
      }
    }
    expect(read).toBe(Buffer.byteLength(text))
    return { tasks, errors: errors.sort((a, b) => a.line - b.line) }
  }

  it.each([
    [
      'JSONL with CRLF, a BOM, comments and bad lines',
      'jsonl',
      '\uFEFF{"type":"a","payload":{"x":1}}\r\n\r\n// c\r\n[1]\r\n{"type":"b","payload":2,"steps":3}\r\n{"type":"a"}',
    ],
    [
      'JSONL without a final newline',
      'jsonl',
      '{"type":"a","payload":1}\n{"type":"a","payload":2}',
    ],
    [
      'CSV with quoted newlines and a bad row',
      'csv',
      'type,payload,steps\na,"{""t"":""x, y""}",2\nb,"{""t"":\n""two""}",1\nc,not json,1\n',
    ],
    ['CSV with a wrong header', 'csv', 'kind,prompt\na,b\n'],
    ['a blank file', 'jsonl', ' \n\n'],
    ['a file of comments only', 'jsonl', '// nothing\n'],
    [
      'keys reused with another payload',
      'jsonl',
      '{"type":"a","key":"k","payload":1}\n{"type":"a","key":"k","payload":2}\n',
    ],
  ] as const)('%s', async (_name, format, text) => {
    const inMemory = parseBatchFile(text, format)
    expect(await streamedParse(text, format)).toEqual({
      tasks: inMemory.tasks,
      errors: inMemory.errors,
    })
  })

  it('keeps lines and characters whole across chunks (1 MB each)', async () => {
    // Multi-byte characters everywhere, so that some chunk ends inside one.
    const lines = Array.from({ length: 40_000 }, (_, i) =>
      JSON.stringify({ type: 'ü', payload: { text: `é${'€'.repeat(i % 17)}${i}` } }),
    )
    const text = `${lines.join('\n')}\n`
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * (1 << 20))
    const { tasks, errors } = await streamedParse(text, 'jsonl')
    expect(errors).toEqual([])
    expect(tasks).toHaveLength(40_000)
    expect(tasks[39_999]).toMatchObject({
      line: 40_000,
      payload: { text: `é${'€'.repeat(39_999 % 17)}39999` },
    })
  })
})
