// Chat messages (OpenAI's roles and content parts, as tasks give them) in the shape of Anthropic's
// Messages API: a top-level system, user and assistant turns alternating, content blocks.
import { isLosslessNumber, stringifyExact } from '../../../shared/exact-json'
import type { ChatMessage, JsonValue } from '../core/types'

type Block = { [key: string]: JsonValue }

export interface AnthropicTurn {
  role: 'user' | 'assistant'
  content: string | Block[]
}

/**
 * System and developer turns go to the top-level `system` field (the API has no such role), a tool
 * result becomes a user turn with a `tool_result` block, an assistant's tool calls become
 * `tool_use` blocks, OpenAI's image parts become image blocks, and consecutive turns of one role
 * are merged because the API requires user and assistant to alternate.
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): {
  system: string | undefined
  messages: AnthropicTurn[]
} {
  const system: string[] = []
  const out: AnthropicTurn[] = []
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(textOf(m.content))
      continue
    }
    const turn = toTurn(m)
    const last = out[out.length - 1]
    if (last && last.role === turn.role) last.content = merge(last.content, turn.content)
    else out.push(turn)
  }
  return { system: system.length > 0 ? system.join('\n\n') : undefined, messages: out }
}

function toTurn(m: ChatMessage): AnthropicTurn {
  if (m.role === 'tool') {
    const result: Block = { type: 'tool_result', tool_use_id: m.fields?.['tool_call_id'] ?? '' }
    if (m.content !== null) {
      result['content'] = typeof m.content === 'string' ? m.content : m.content.map(toBlock)
    }
    return { role: 'user', content: [result] }
  }
  const role = m.role === 'assistant' ? 'assistant' : 'user'
  const calls = m.fields?.['tool_calls']
  if (role === 'assistant' && Array.isArray(calls) && calls.length > 0) {
    const blocks = m.content === null ? [] : blocksOf(m.content)
    return { role, content: [...blocks.filter((b) => b['text'] !== ''), ...calls.map(toolUse)] }
  }
  if (m.content === null) return { role, content: '' }
  return { role, content: typeof m.content === 'string' ? m.content : m.content.map(toBlock) }
}

function merge(a: AnthropicTurn['content'], b: AnthropicTurn['content']): AnthropicTurn['content'] {
  if (typeof a === 'string' && typeof b === 'string') return `${a}\n\n${b}`
  return [...blocksOf(a), ...blocksOf(b)]
}

function blocksOf(content: string | JsonValue[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content.map(toBlock)
}

/** An OpenAI content part as an Anthropic block; a block already in Anthropic's shape as is. */
function toBlock(part: JsonValue): Block {
  if (typeof part === 'string') return { type: 'text', text: part }
  if (part === null || typeof part !== 'object' || Array.isArray(part) || isLosslessNumber(part)) {
    return { type: 'text', text: stringifyExact(part) }
  }
  if (part['type'] === 'image_url') {
    const image = part['image_url']
    const url = typeof image === 'string' ? image : field(image, 'url')
    if (typeof url === 'string') {
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url)
      const source: Block = data
        ? { type: 'base64', media_type: data[1]!, data: data[2]! }
        : { type: 'url', url }
      return { type: 'image', source }
    }
  }
  return part
}

/** An OpenAI tool call ({id, function: {name, arguments}}) as a tool_use block. */
function toolUse(call: JsonValue): Block {
  const fn = field(call, 'function')
  const args = field(fn, 'arguments')
  let input: JsonValue = {}
  if (typeof args === 'string') {
    try {
      input = JSON.parse(args) as JsonValue
    } catch {
      input = { arguments: args }
    }
  } else if (args !== undefined) {
    input = args
  }
  return {
    type: 'tool_use',
    id: field(call, 'id') ?? '',
    name: field(fn, 'name') ?? '',
    input,
  }
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content
  if (content === null) return ''
  return content.map((p) => (typeof p === 'string' ? p : textField(p))).join('')
}

function textField(part: JsonValue): string {
  const text = field(part, 'text')
  return typeof text === 'string' ? text : ''
}

function field(obj: JsonValue | undefined, key: string): JsonValue | undefined {
  return obj !== null && typeof obj === 'object' && !Array.isArray(obj) ? obj[key] : undefined
}
