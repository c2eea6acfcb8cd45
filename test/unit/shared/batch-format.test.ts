import { describe, expect, it } from 'vitest'
import { BATCH_FILE_ACCEPT, batchFormatOf, formatFromName } from '../../../src/shared/batch-format'

describe('batchFormatOf (console file picker, desktop menu)', () => {
  it('guesses the format from the extension only when it is clear', () => {
    expect(batchFormatOf('a.CSV')).toBe('csv')
    expect(batchFormatOf('a.ndjson')).toBe('jsonl')
    expect(batchFormatOf('a.jsonl')).toBe('jsonl')
    expect(batchFormatOf('/home/me/runs.v2/batch.JsonL')).toBe('jsonl')
    expect(batchFormatOf('a.txt')).toBeNull()
    expect(batchFormatOf('a.json')).toBeNull()
    expect(batchFormatOf('csv')).toBeNull()
  })

  it('offers the same extensions to a file picker', () => {
    expect(BATCH_FILE_ACCEPT).toBe('.jsonl,.ndjson,.csv')
    for (const extension of BATCH_FILE_ACCEPT.split(',')) {
      expect(batchFormatOf(`x${extension}`)).not.toBeNull()
    }
  })
})

describe('formatFromName (engine, pacer run)', () => {
  it('picks the format from the name', () => {
    expect(formatFromName('x.CSV')).toBe('csv')
    expect(formatFromName('x.jsonl')).toBe('jsonl')
    expect(formatFromName('x.ndjson')).toBe('jsonl')
  })

  it('reads any other name as JSONL', () => {
    expect(formatFromName('tasks.txt')).toBe('jsonl')
    expect(formatFromName('tasks')).toBe('jsonl')
  })
})
