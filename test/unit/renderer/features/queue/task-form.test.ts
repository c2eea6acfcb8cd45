import { describe, expect, it } from 'vitest'
import {
  buildTaskInput,
  checkPayload,
  EMPTY_TASK_FORM,
  fieldOfError,
} from '../../../../../src/renderer/src/features/queue/task-form'

describe('the add-task form payload', () => {
  it('refuses 1e400: JSON.parse makes it Infinity, which would be sent as null', () => {
    const text = '{"items":[{"price":1},{"price":2},{"price":3},{"price":1e400}]}'
    expect(checkPayload(text)).toEqual({
      ok: false,
      message: 'payload.items[3].price is Infinity, which is not JSON',
      path: 'payload.items[3].price',
      line: null,
      column: null,
    })
    expect(buildTaskInput({ ...EMPTY_TASK_FORM, type: 'summarize', payload: text })).toEqual({
      ok: false,
      field: 'payload',
      message: 'payload.items[3].price is Infinity, which is not JSON',
    })
    expect(checkPayload('-1e999')).toMatchObject({ ok: false, path: 'payload' })
  })

  it('still places a syntax error by line and column', () => {
    const check = checkPayload('{\n  "a": 1,\n  "b": }')
    expect(check).toMatchObject({ ok: false, line: 3, column: expect.any(Number) })
    const built = buildTaskInput({
      ...EMPTY_TASK_FORM,
      type: 't',
      payload: '{\n  "a": 1,\n  "b": }',
    })
    expect(built).toMatchObject({ ok: false, field: 'payload' })
    expect(!built.ok && built.message).toMatch(/at line 3, column \d+$/)
  })

  it('accepts large but finite numbers', () => {
    expect(checkPayload('{"n": 1e308, "m": -1e-300}')).toEqual({
      ok: true,
      value: { n: 1e308, m: -1e-300 },
    })
    const built = buildTaskInput({ ...EMPTY_TASK_FORM, type: 't', payload: '{"n": 1e308}' })
    expect(built).toEqual({ ok: true, task: { type: 't', payload: { n: 1e308 }, steps: 1 } })
  })

  it('refuses a number it would round (issue 11): the task would not be the one written', () => {
    const message = (path: string, digits: string, sent: string) =>
      `${path} is ${digits}, which the console would send as ${sent}: import it from a batch file, which keeps every digit`
    expect(checkPayload('{"m": -1e-400}')).toEqual({
      ok: false,
      message: message('payload.m', '-1e-400', '0'),
      path: 'payload.m',
      line: null,
      column: null,
    })
    const task = { ...EMPTY_TASK_FORM, type: 't', payload: '{"ids":[1, 9007199254740993]}' }
    expect(buildTaskInput(task)).toEqual({
      ok: false,
      field: 'payload',
      message: message('payload.ids[1]', '9007199254740993', '9007199254740992'),
    })
    const params = { ...task, payload: '{}', params: '{"temperature": 0.70000000000000001}' }
    expect(buildTaskInput(params)).toEqual({
      ok: false,
      field: 'params',
      message: `Params: ${message('params.temperature', '0.70000000000000001', '0.7')}`,
    })
    // 1.0 and 1e3 are the doubles 1 and 1000: sent as the engine would read them.
    expect(checkPayload('{"a": 1.0, "b": 1e3}')).toEqual({ ok: true, value: { a: 1, b: 1000 } })
  })

  it('sends params as an object, and refuses params that are not one', () => {
    const task = { ...EMPTY_TASK_FORM, type: 't', payload: '{}' }
    expect(buildTaskInput({ ...task, params: ' {"max_tokens": 20, "seed": 1} ' })).toEqual({
      ok: true,
      task: { type: 't', payload: {}, steps: 1, params: { max_tokens: 20, seed: 1 } },
    })
    expect(buildTaskInput({ ...task, params: '[1]' })).toEqual({
      ok: false,
      field: 'params',
      message: 'Params: must be a JSON object',
    })
    expect(buildTaskInput({ ...task, params: '{"seed":' })).toMatchObject({
      ok: false,
      field: 'params',
    })
    expect(
      fieldOfError({ code: 'invalid_input', message: 'x', field: 'tasks[0].params.seed' }),
    ).toBe('params')
  })
})
