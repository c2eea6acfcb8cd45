import { stringifyExact } from '../../../shared/exact-json'
import type { ChatMessage, ChatRole, JsonValue } from '../core/types'

const ROLES: ReadonlySet<string> = new Set<ChatRole>([
  'system',
  'developer',
  'user',
  'assistant',
  'tool',
])

/**
 * How a task becomes chat messages. Shared by the runner (what is sent), the forecast (what will be
 * sent) and the simulated provider, so estimates and runs agree.
 *
 * - `payload.messages` (array of {role, content, ...}) is sent as is: content parts stay parts,
 *   every role (system, developer, user, assistant, tool) and field (tool_call_id, tool_calls,
 *   name) stays what it was;
 * - `payload.prompt` (string), with an optional `payload.system`, becomes one user message;
 * - anything else is sent as the task type and the payload's JSON, its numbers as written.
 */
export function taskMessages(type: string, payload: JsonValue): ChatMessage[] {
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    const messages = payload['messages']
    if (Array.isArray(messages) && messages.every(isChatMessage)) {
      return messages.map(toChatMessage)
    }
    const prompt = payload['prompt']
    if (typeof prompt === 'string') {
      const system = payload['system']
      return typeof system === 'string'
        ? [
            { role: 'system', content: system },
            { role: 'user', content: prompt },
          ]
        : [{ role: 'user', content: prompt }]
    }
  }
  return [{ role: 'user', content: `Task ${type}: ${stringifyExact(payload)}` }]
}

/** The user turn that asks a multi-step agent for its next step (history is resent before it). */
export function continueMessage(step: number, steps: number): ChatMessage & { content: string } {
  return { role: 'user', content: `Continue: step ${step} of ${steps}.` }
}

// What an image part counts as, in characters (~4 a token): OpenAI bills a low-detail image 85
// tokens; a rough figure is better than none for a forecast or a missing usage.
const IMAGE_CHARS = 85 * 4

/**
 * The characters of a message that count as its size: its text, the text of its parts (an image
 * part counts as IMAGE_CHARS), and the JSON of what else it carries (tool calls, tool call ids).
 */
export function messageChars(m: ChatMessage): number {
  let chars = 0
  if (typeof m.content === 'string') chars = m.content.length
  else if (Array.isArray(m.content)) {
    for (const part of m.content) {
      const text = partText(part)
      chars +=
        text !== undefined
          ? text.length
          : isImagePart(part)
            ? IMAGE_CHARS
            : stringifyExact(part).length
    }
  }
  if (m.fields) chars += stringifyExact(m.fields).length
  return chars
}

/** Rough token count used for forecasts and the simulated provider: about 4 characters a token. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0
  for (const m of messages) chars += messageChars(m)
  return Math.max(1, Math.ceil(chars / 4))
}

function partText(part: JsonValue): string | undefined {
  if (typeof part === 'string') return part
  if (part === null || typeof part !== 'object' || Array.isArray(part)) return undefined
  const text = part['text']
  return typeof text === 'string' ? text : undefined
}

function isImagePart(part: JsonValue): boolean {
  if (part === null || typeof part !== 'object' || Array.isArray(part)) return false
  const type = part['type']
  return type === 'image_url' || type === 'image' || type === 'input_image'
}

export type MessageObject = { [key: string]: JsonValue } & {
  role: ChatRole
  content?: string | JsonValue[] | null
}

export function isChatMessage(value: JsonValue): value is MessageObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const role = value['role']
  if (typeof role !== 'string' || !ROLES.has(role)) return false
  const content = value['content']
  if (typeof content === 'string' || Array.isArray(content)) return true
  // An assistant turn that only called tools has no content.
  return role === 'assistant' && (content === null || content === undefined)
}

export function toChatMessage(m: MessageObject): ChatMessage {
  const { role, content, ...rest } = m
  const message: ChatMessage = { role, content: content ?? null }
  if (Object.keys(rest).length > 0) message.fields = rest
  return message
}
