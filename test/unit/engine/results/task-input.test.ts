// What the task drawer may show of a task's input: credentials redacted (by field name, by a
// configured key's value, by a vendor key's shape), numbers as written, JSON indented.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../../../src/main/engine/app/engine'
import { indentJson, Redactor, taskInput } from '../../../../src/main/engine/results/task-input'
import { tempDir } from '../../../helpers/cli'

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

describe('tasks:get on a real database', () => {
  it('lists the execution’s journal and redacts a configured key from the payload', async () => {
    const key = 'configured-openai-key-0123456789'
    const engine = createEngine({
      dbPath: join(tempDir(), 'pacer.db'),
      secrets: {
        get: (p) => (p === 'openai' ? key : null),
        keysFrom: 'environment',
        available: false,
        reason: null,
      },
    })
    try {
      const { batchId } = await engine.handlers['tasks:enqueue']({
        tasks: [{ type: 't', payload: { prompt: `use ${key}` }, params: { max_tokens: 9 } }],
      })
      const task = engine.db
        .prepare(
          'SELECT t.id, t.fp_id FROM task_queue t JOIN batches b ON b.key = t.batch WHERE b.id = ?',
        )
        .get(batchId) as { id: number; fp_id: number }
      // An interrupted execution: call 1 answered, a step's value, call 3 sent with no answer.
      const entry = engine.db.prepare(
        `INSERT INTO call_journal (fp_id, idx, kind, hash, state, epoch, task_id, ts, body, cost_micros)
         VALUES (?, ?, ?, x'00', ?, 1, ?, ?, ?, ?)`,
      )
      entry.run(
        task.fp_id,
        1,
        1,
        1,
        task.id,
        1000,
        JSON.stringify({ text: 'plan', model: 'm1' }),
        42,
      )
      entry.run(task.fp_id, 2, 2, 1, task.id, 1001, '{"hits":[3]}', null)
      entry.run(task.fp_id, 3, 1, 0, task.id, 1002, null, null)
      const detail = await engine.handlers['tasks:get']({ taskId: task.id })
      expect(detail.journal).toEqual([
        {
          idx: 1,
          kind: 'call',
          state: 'answered',
          ts: 1000,
          model: 'm1',
          costMicros: 42,
          text: 'plan',
        },
        {
          idx: 2,
          kind: 'step',
          state: 'answered',
          ts: 1001,
          model: null,
          costMicros: null,
          text: '{\n  "hits": [\n    3\n  ]\n}',
        },
        {
          idx: 3,
          kind: 'call',
          state: 'sent',
          ts: 1002,
          model: null,
          costMicros: null,
          text: null,
        },
      ])
      expect(detail.input.payload).toBe('{\n  "prompt": "use [redacted]"\n}')
      expect(detail.input.params).toBe('{\n  "max_tokens": 9\n}')
      expect(JSON.stringify(detail)).not.toContain(key)
    } finally {
      await engine.shutdown()
    }
  })
})
