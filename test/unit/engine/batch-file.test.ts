import { describe, expect, it } from 'vitest'
import { parseBatchFile } from '../../../src/main/engine/batch-file'
import { fingerprint } from '../../../src/main/engine/fingerprint'

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
      '{"type":"a","payload":{"deep":1e999}}',
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
