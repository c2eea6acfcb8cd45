import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { EngineError } from '../../../src/main/engine/core/errors'
import { dispatchCommand, toCommandError } from '../../../src/main/transport/commands'
import { createFakeEngine } from '../../helpers/fake-engine'

describe('toCommandError', () => {
  it.each<[string, unknown, object]>([
    [
      'a domain error keeps code and field',
      new EngineError('not_found', 'no batch b1', 'batchId'),
      { code: 'not_found', message: 'no batch b1', field: 'batchId' },
    ],
    [
      'a Node error keeps its errno code',
      Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }),
      { code: 'EACCES', message: 'EACCES: permission denied' },
    ],
    ['a plain Error becomes internal', new Error('boom'), { code: 'internal', message: 'boom' }],
    [
      'a numeric code is not trusted',
      Object.assign(new Error('x'), { code: 42 }),
      { code: 'internal', message: 'x' },
    ],
    [
      'a code with spaces is not trusted',
      Object.assign(new Error('x'), { code: 'drop table' }),
      { code: 'internal', message: 'x' },
    ],
    ['a thrown string', 'just a string', { code: 'internal', message: 'just a string' }],
    ['null', null, { code: 'internal', message: 'null' }],
    [
      'an error without a message',
      Object.assign(new Error(''), { code: 'busy' }),
      { code: 'busy', message: 'unexpected error' },
    ],
  ])('%s', (_name, err, expected) => {
    expect(toCommandError(err)).toEqual(expected)
  })

  it('never includes the stack', () => {
    const err = new Error('boom')
    expect(JSON.stringify(toCommandError(err))).not.toContain('commands.test.ts')
  })

  it('caps very long messages', () => {
    expect(toCommandError(new Error('x'.repeat(10_000))).message).toHaveLength(2000)
  })

  it('maps a ZodError thrown by a handler to invalid_input with the field', () => {
    const parsed = z.object({ a: z.object({ b: z.number() }) }).safeParse({ a: { b: 'no' } })
    expect(parsed.success).toBe(false)
    if (!parsed.success) {
      expect(toCommandError(parsed.error)).toMatchObject({ code: 'invalid_input', field: 'a.b' })
    }
  })
})

describe('dispatchCommand', () => {
  it('answers unknown channels, including prototype names, as unknown_command', async () => {
    const engine = createFakeEngine()
    for (const channel of ['nope', '__proto__', 'constructor', 'toString']) {
      expect(await dispatchCommand(engine.handlers, channel, {})).toMatchObject({
        ok: false,
        error: { code: 'unknown_command' },
      })
    }
  })

  it('reports internal errors to its logger, and only those', async () => {
    const engine = createFakeEngine()
    const log = vi.fn()
    await dispatchCommand(engine.handlers, 'scheduler:get', {}, log)
    await dispatchCommand(engine.handlers, 'batches:pause', { batchId: 'x' }, log)
    expect(log).toHaveBeenCalledTimes(1)
    expect(log.mock.calls[0]?.[0]).toBe('scheduler:get')
  })
})
