// Issue 11, exact input: numbers as written (integers past 2^53, decimals a double cannot hold)
// and bytes that are UTF-8, wherever a batch line, a CSV cell or params enter the engine.
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
  validateTask,
  type ParsedTask,
} from '../../../../src/main/engine/intake/batch-file'
import { isLosslessNumber, parseExactJson, stringifyExact } from '../../../../src/shared/exact-json'
import { canonicalJson, fingerprint } from '../../../../src/main/engine/core/fingerprint'
import { taskMessages } from '../../../../src/main/engine/providers/prompt'
import { resolverFor } from '../../../../src/main/engine/intake/task-resolver'
import type { JsonValue } from '../../../../src/main/engine/core/types'

const canonical = (text: string) => canonicalJson(parseExactJson(text))

describe('numbers as written', () => {
  it('keeps integers past 2^53 and decimals past a double apart, and their digits', () => {
    expect(canonical('{"n":9007199254740993}')).toBe('{"n":9007199254740993}')
    expect(canonical('{"n":9007199254740992}')).toBe('{"n":9007199254740992}')
    expect(canonical('{"n":1e-400}')).toBe('{"n":1e-400}')
    expect(canonical('{"n":1e400}')).toBe('{"n":1e400}')
    expect(canonical('{"n":0.10000000000000001}')).toBe('{"n":0.10000000000000001}')
    expect(canonical('[123456789012345678901234567890]')).toBe('[123456789012345678901234567890]')
    const fps = ['9007199254740993', '9007199254740992', '1e-400', '0'].map((n) =>
      fingerprint('t', parseExactJson(`{"n":${n}}`)),
    )
    expect(new Set(fps).size).toBe(4)
  })

  it('reads a number a double holds as that double: stored fingerprints stay what they were', () => {
    // 1.0 and 1 are one value: the same task as before this change, as JSON.parse read it.
    for (const text of ['{"n":1.0}', '{"n":1e0}', '{"n":-0}', '{"n":0.1}', '{"n":1E+3}']) {
      expect(canonical(text)).toBe(canonicalJson(JSON.parse(text)))
      expect(fingerprint('t', parseExactJson(text))).toBe(fingerprint('t', JSON.parse(text)))
    }
    expect(parseExactJson('{"n":9007199254740992}')).toEqual({ n: 2 ** 53 })
    // What code reading a payload gets for a number a double cannot hold: its digits.
    const { n } = parseExactJson('{"n":9007199254740993}') as { n: unknown }
    expect(isLosslessNumber(n) && n.value).toBe('9007199254740993')
  })

  it('reads lines without a risky number with JSON.parse, and the same either way', () => {
    const lines = [
      '{"type":"a","payload":{"text":"room 1e5, id 12345678901234567"},"steps":3}',
      '{"a":[1,2,{"b":-3.25}],"a":"last wins"}',
      '{"__proto__":{"x":1},"big":1e2}',
    ]
    for (const line of lines) expect(parseExactJson(line)).toEqual(JSON.parse(line))
    expect(Object.keys(parseExactJson(lines[2]!) as object)).toEqual(['__proto__', 'big'])
  })

  it('words a line that is not JSON as JSON.parse does, on either path', () => {
    for (const text of ['{"a":1,}', '{"a":1e999,}']) {
      expect(() => parseExactJson(text)).toThrow(SyntaxError)
      expect(() => parseExactJson(text)).toThrow(/position 7|property name/)
    }
  })

  it('writes a LosslessNumber as its digits in a request body and in a prompt', () => {
    const payload = parseExactJson('{"n":9007199254740993,"x":[1e-400]}') as JsonValue
    expect(stringifyExact({ body: payload })).toBe('{"body":{"n":9007199254740993,"x":[1e-400]}}')
    expect(stringifyExact({ plain: [1, 'a'] })).toBe(JSON.stringify({ plain: [1, 'a'] }))
    expect(taskMessages('t', payload)).toEqual([
      { role: 'user', content: 'Task t: {"n":9007199254740993,"x":[1e-400]}' },
    ])
  })
})

describe('tasks with exact numbers', () => {
  const accept = (line: string): { task: ParsedTask | null; errors: LineError[] } => {
    const errors: LineError[] = []
    return { task: validateTask(parseExactJson(line), 1, errors), errors }
  }

  it('keeps two bigint lines as two tasks, each payload as written', () => {
    const { tasks, errors } = parseBatchFile(
      '{"type":"t","payload":{"n":9007199254740993}}\n{"type":"t","payload":{"n":9007199254740992}}\n{"type":"t","payload":{"n":1e-400}}\n{"type":"t","payload":{"n":0}}',
      'jsonl',
    )
    expect(errors).toEqual([])
    expect(tasks.map((t) => t.payloadJson)).toEqual([
      '{"n":9007199254740993}',
      '{"n":9007199254740992}',
      '{"n":1e-400}',
      '{"n":0}',
    ])
    expect(new Set(tasks.map((t) => t.fp)).size).toBe(4)
  })

  it('keeps params with big numbers exact in their canonical form, and apart', () => {
    const resolve = resolverFor({ providers: ['sim'], defaultProvider: 'sim', defaultModel: 'm' })
    const paramsOf = (params: string) => {
      const { task, errors } = accept(`{"type":"t","payload":1,"params":${params}}`)
      expect(errors).toEqual([])
      const resolved = resolve(task!, errors)!
      return { json: resolved.paramsJson, fp: resolved.fp }
    }
    const schema =
      '{"response_format":{"json_schema":{"maximum":18446744073709551617},"type":"json_schema"},"temperature":0.70000000000000001}'
    expect(paramsOf(schema).json).toBe(schema)
    const a = paramsOf('{"temperature":0.70000000000000001}')
    const b = paramsOf('{"temperature":0.7}')
    expect(a.json).toBe('{"temperature":0.70000000000000001}')
    expect(a.fp).not.toBe(b.fp)
  })

  it('refuses a step count or an integer param that a double cannot hold, never rounds it', () => {
    expect(accept('{"type":"t","payload":1,"steps":1.0000000000000001}').errors).toEqual([
      { line: 1, field: 'steps', message: 'must be an integer, got 1.0000000000000001' },
    ])
    expect(accept('{"type":"t","payload":1,"steps":9007199254740993}').errors[0]).toMatchObject({
      field: 'steps',
    })
    const seed = accept('{"type":"t","payload":1,"params":{"seed":9007199254740993}}')
    expect(seed.errors[0]).toMatchObject({ field: 'params.seed', message: /too big/i })
    const temperature = accept('{"type":"t","payload":1,"params":{"temperature":2.5e0}}')
    expect(temperature.errors[0]).toMatchObject({ field: 'params.temperature' })
  })

  it('refuses a lone surrogate, in the payload or the type: it is not text', () => {
    const inPayload = accept('{"type":"t","payload":{"s":"caf\\ud800"}}')
    expect(inPayload.errors).toEqual([
      {
        line: 1,
        field: 'payload.s',
        message: 'payload.s has a lone surrogate (half of a UTF-16 pair), which is not text',
      },
    ])
    expect(accept('{"type":"t\\udfff","payload":1}').errors[0]).toMatchObject({ field: 'type' })
    // A pair, escaped, is a character.
    expect(accept('{"type":"t","payload":"\\ud83d\\ude00"}').task?.payloadJson).toBe('"😀"')
  })
})

describe('batch files must be UTF-8', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pacer-exact-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  async function streamed(bytes: Buffer, format: 'jsonl' | 'csv', chunkBytes?: number) {
    const path = join(dir, `f-${Math.random().toString(36).slice(2)}.${format}`)
    writeFileSync(path, bytes)
    const tasks: ParsedTask[] = []
    const errors: LineError[] = []
    const validator = new TaskValidator(memoryKeys())
    for await (const rows of readBatchRows(path, format, undefined, chunkBytes)) {
      for (const row of rows) {
        const task = validator.accept(row, errors)
        if (task) tasks.push(task)
      }
    }
    return { tasks, errors }
  }

  const line = (text: string) => Buffer.from(`${text}\n`, 'latin1')

  it('refuses caf\\xe9 and caf\\xe8 with their line and byte, and keeps the other lines', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"type":"t","payload":"café"}\n'),
      line('{"type":"t","payload":"caf\xe9"}'),
      line('{"type":"t","payload":"caf\xe8"}'),
    ])
    for (const chunkBytes of [undefined, 1, 5, 30]) {
      const { tasks, errors } = await streamed(bytes, 'jsonl', chunkBytes)
      expect(tasks.map((t) => t.payload)).toEqual(['café'])
      expect(errors).toEqual([
        { line: 2, message: 'byte 27: invalid UTF-8 (0xE9): save the file as UTF-8' },
        { line: 3, message: 'byte 27: invalid UTF-8 (0xE8): save the file as UTF-8' },
      ])
    }
  })

  it('accepts a character cut by a chunk boundary, wherever it falls', async () => {
    const text = '\uFEFF{"type":"t","payload":"é€😀"}\n{"type":"t","payload":"ü"}'
    for (let chunkBytes = 1; chunkBytes <= 12; chunkBytes++) {
      const { tasks, errors } = await streamed(Buffer.from(text), 'jsonl', chunkBytes)
      expect(errors).toEqual([])
      expect(tasks.map((t) => t.payload)).toEqual(['é€😀', 'ü'])
    }
  })

  it('refuses overlong forms, surrogates and a character cut off by the end', async () => {
    const bad = [
      Buffer.from([0xc0, 0xaf]), // "/" overlong
      Buffer.from([0xed, 0xa0, 0x80]), // U+D800
      Buffer.from([0xf4, 0x90, 0x80, 0x80]), // past U+10FFFF
    ]
    for (const b of bad) {
      const bytes = Buffer.concat([Buffer.from('{"type":"t","payload":"'), b, Buffer.from('"}')])
      const { errors } = await streamed(bytes, 'jsonl', 3)
      expect(errors).toEqual([
        { line: 1, message: expect.stringMatching(/^byte 24: invalid UTF-8/) as string },
      ])
    }
    const cut = Buffer.concat([
      Buffer.from('{"type":"t","payload":1}\n"'),
      Buffer.from([0xe2, 0x82]),
    ])
    expect((await streamed(cut, 'jsonl', 2)).errors).toEqual([
      { line: 2, message: 'byte 2: invalid UTF-8 (0xE2): save the file as UTF-8' },
    ])
  })

  it('refuses a CSV record with a bad byte, by its line, and reads numbers as written', async () => {
    const bytes = Buffer.concat([
      Buffer.from('type,payload\nt,"{""n"":9007199254740993}"\n'),
      line('t,caf\xe9'),
      Buffer.from('t,"{""n"":9007199254740992}"\n'),
    ])
    for (const chunkBytes of [undefined, 4]) {
      const { tasks, errors } = await streamed(bytes, 'csv', chunkBytes)
      expect(tasks.map((t) => t.payloadJson)).toEqual([
        '{"n":9007199254740993}',
        '{"n":9007199254740992}',
      ])
      expect(errors).toEqual([
        { line: 3, message: 'byte 6: invalid UTF-8 (0xE9): save the file as UTF-8' },
      ])
    }
  })
})
