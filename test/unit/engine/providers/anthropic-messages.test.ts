import { describe, expect, it } from 'vitest'
import { toAnthropicMessages } from '../../../../src/main/engine/providers/anthropic-messages'
import { taskMessages } from '../../../../src/main/engine/providers/prompt'

describe('chat messages in the Messages API shape', () => {
  it('keeps plain text turns as text, merging consecutive turns of one role', () => {
    const { system, messages } = toAnthropicMessages([
      { role: 'system', content: 'a' },
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: 'three' },
    ])
    expect(system).toBe('a')
    expect(messages).toEqual([
      { role: 'user', content: 'one\n\ntwo' },
      { role: 'assistant', content: 'three' },
    ])
  })

  it('maps image URLs, keeps blocks already in its shape, and merges text into blocks', () => {
    const { messages } = taskMessagesOf([
      { role: 'user', content: 'look:' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' } },
        ],
      },
    ])
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look:' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' } },
        ],
      },
    ])
  })

  it("turns an assistant's text and tool calls into blocks, and tool results into user turns", () => {
    const { messages } = taskMessagesOf([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Oslo"}' } },
          { id: 'c2', type: 'function', function: { name: 'w', arguments: 'not json' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '12°C' },
      { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'n/a' }] },
    ])
    expect(messages).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'c1', name: 'w', input: { city: 'Oslo' } },
          { type: 'tool_use', id: 'c2', name: 'w', input: { arguments: 'not json' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: '12°C' },
          { type: 'tool_result', tool_use_id: 'c2', content: [{ type: 'text', text: 'n/a' }] },
        ],
      },
    ])
  })
})

describe('a payload of messages', () => {
  it('is taken as given: parts, every role and their other fields', () => {
    const given = [
      { role: 'developer', content: 'x', name: 'ops' },
      { role: 'assistant', content: null, tool_calls: [] },
      { role: 'tool', tool_call_id: 't', content: 'y' },
    ]
    expect(taskMessages('t', { messages: given } as never)).toEqual([
      { role: 'developer', content: 'x', fields: { name: 'ops' } },
      { role: 'assistant', content: null, fields: { tool_calls: [] } },
      { role: 'tool', content: 'y', fields: { tool_call_id: 't' } },
    ])
  })

  it('with an unknown role or a missing content is sent as the JSON it is', () => {
    const [only] = taskMessages('t', { messages: [{ role: 'robot', content: 'x' }] })
    expect(only).toEqual({
      role: 'user',
      content: 'Task t: {"messages":[{"role":"robot","content":"x"}]}',
    })
    expect(taskMessages('t', { messages: [{ role: 'user' }] })[0]!.content).toMatch(/^Task t: /)
  })
})

function taskMessagesOf(messages: unknown[]) {
  return toAnthropicMessages(taskMessages('t', { messages } as never))
}
