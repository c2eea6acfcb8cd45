import type { ChatMessage, JsonValue } from './types'

/**
 * How a task becomes chat messages. Shared by the runner (what is sent), the forecast (what will be
 * sent) and the simulated provider, so estimates and runs agree.
 *
 * - `payload.messages` (array of {role, content}) is sent as is;
 * - `payload.prompt` (string), with an optional `payload.system`, becomes one user message;
 * - anything else is sent as the task type and the payload's JSON.
 */
export function taskMessages(type: string, payload: JsonValue): ChatMessage[] {
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    const messages = payload['messages']
    if (Array.isArray(messages) && messages.every(isChatMessage)) {
      return messages.map((m) => ({ role: m.role, content: m.content }))
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
  return [{ role: 'user', content: `Task ${type}: ${JSON.stringify(payload)}` }]
}

/** The user turn that asks a multi-step agent for its next step (history is resent before it). */
export function continueMessage(step: number, steps: number): ChatMessage {
  return { role: 'user', content: `Continue: step ${step} of ${steps}.` }
}

/** Rough token count used for forecasts and the simulated provider: about 4 characters a token. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0
  for (const m of messages) chars += m.content.length
  return Math.max(1, Math.ceil(chars / 4))
}

function isChatMessage(value: JsonValue): value is { role: ChatMessage['role']; content: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const role = value['role']
  return (
    (role === 'system' || role === 'user' || role === 'assistant') &&
    typeof value['content'] === 'string'
  )
}
