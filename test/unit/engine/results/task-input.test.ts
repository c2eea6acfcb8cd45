// What the task drawer may show of a task's input: credentials redacted (by field name, by a
// configured key's value, by a vendor key's shape), numbers as written, JSON indented.
import { describe, expect, it } from 'vitest'
import { indentJson, Redactor, taskInput } from '../../../../src/main/engine/results/task-input'

describe('task input for the drawer', () => {
  it('redacts fields named like credentials, configured keys and key shapes, but not token counts', () => {
    const r = new Redactor(['configured-key-123456', null, 'short'])
    const out = r.value({
      api_key: 'abc',
      headers: { Authorization: 'Bearer xyz', 'x-api-key': 'k' },
      openai_api_key: 'k2',
      max_tokens: 64,
      note: 'use configured-key-123456 or sk-abcdefghijklmnopqrstuv please',
      short: 'short words stay',
    })
    expect(out).toEqual({
      api_key: '[redacted]',
      headers: { Authorization: '[redacted]', 'x-api-key': '[redacted]' },
      openai_api_key: '[redacted]',
      max_tokens: 64,
      note: 'use [redacted] or [redacted] please',
      short: 'short words stay',
    })
    expect(r.text('auth: Bearer abcdefghijk')).toBe('auth: [redacted]')
  })

  it('indents JSON text without reading its numbers', () => {
    const text = '{"a":[1,{"b":"x,y:{z}"}],"big":12345678901234567890,"e":{},"s":"q\\"}"}'
    expect(indentJson(text)).toBe(
      '{\n  "a": [\n    1,\n    {\n      "b": "x,y:{z}"\n    }\n  ],\n  "big": 12345678901234567890,\n  "e": {},\n  "s": "q\\"}"\n}',
    )
    expect(new Redactor([]).json('{"n":12345678901234567890}')).toContain('12345678901234567890')
  })

  it('resolves the built-in loop’s messages, and none for an agent module’s task type', () => {
    const row = {
      type: 'summarize',
      payload: '{"prompt":"hi","system":"sys"}',
      params: '{"max_tokens":5}',
      steps: 2,
      provider: 'sim',
      model: 'sim-small',
      agents: JSON.stringify({
        path: '/a/agent.mjs',
        identity: 'version:1',
        code: 'version:1',
        types: ['research'],
      }),
    }
    const builtin = taskInput(row, new Redactor([]))
    expect(builtin.agent).toBeNull()
    expect(builtin.messages).toEqual([
      { role: 'system', content: 'sys', fields: null },
      { role: 'user', content: 'hi', fields: null },
    ])
    const agent = taskInput({ ...row, type: 'research' }, new Redactor([]))
    expect(agent.agent).toEqual({ path: '/a/agent.mjs', identity: 'version:1', code: 'version:1' })
    expect(agent.messages).toBeNull()
  })
})
