// OpenAI's Chat Completions and Anthropic's Messages APIs as a fake vendor needs them: what a
// request asks (route, model, key, messages, prompt) and the bodies of answers and errors.
import type { Recorded } from './server'

export type Dialect = 'openai' | 'anthropic'

/** The dialect a request speaks, by its route; undefined for a route neither API has. */
export function dialectOf(req: Recorded): Dialect | undefined {
  if (req.method !== 'POST') return undefined
  if (req.path.endsWith('/chat/completions')) return 'openai'
  if (req.path.endsWith('/v1/messages')) return 'anthropic'
  return undefined
}

export interface Message {
  role: string
  content: string
}

/** A message's text: a string, or the text blocks of Anthropic's content joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as { text?: unknown }[])
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join('')
}

export function messagesOf(req: Recorded): Message[] {
  const messages = req.body['messages']
  if (!Array.isArray(messages)) return []
  return (messages as { role?: unknown; content?: unknown }[]).map((m) => ({
    role: String(m.role),
    content: textOf(m.content),
  }))
}

/** The task's prompt: the first user message. */
export function promptOf(req: Recorded): string {
  return messagesOf(req).find((m) => m.role === 'user')?.content ?? ''
}

export const modelOf = (req: Recorded): string => String(req.body['model'])

/** The key a request carries: OpenAI's Authorization: Bearer, Anthropic's x-api-key. */
export function keyOf(dialect: Dialect, req: Recorded): string | undefined {
  if (dialect === 'anthropic') return req.headers['x-api-key'] as string | undefined
  return /^Bearer (.+)$/.exec((req.headers.authorization as string | undefined) ?? '')?.[1]
}

/** Usage as the dialect reports it. */
export function vendorUsage(dialect: Dialect, input: number, output: number): unknown {
  return dialect === 'openai'
    ? { prompt_tokens: input, completion_tokens: output, total_tokens: input + output }
    : { input_tokens: input, output_tokens: output }
}

/** The answer a vendor gives a call: text, and usage unless `usage` is null. */
export function vendorAnswer(dialect: Dialect, text: string, usage: unknown = null): unknown {
  if (dialect === 'openai') {
    return {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      ...(usage === null ? {} : { usage }),
    }
  }
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    ...(usage === null ? {} : { usage }),
  }
}

/** A full answer of the fake vendor's own: numbered id, the model asked for, a finish reason. */
export function answerBody(
  dialect: Dialect,
  n: number,
  model: string,
  text: string,
  finishReason: 'stop' | 'length',
  usage: unknown,
): unknown {
  if (dialect === 'openai') {
    return {
      id: `chatcmpl-${n}`,
      object: 'chat.completion',
      model,
      choices: [
        { index: 0, message: { role: 'assistant', content: text }, finish_reason: finishReason },
      ],
      usage,
    }
  }
  return {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: finishReason === 'length' ? 'max_tokens' : 'end_turn',
    usage,
  }
}

export const openAiError = (message: string, type: string, code: string | null) => ({
  error: { message, type, param: null, code },
})

export const anthropicError = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
})

export function openAiCompletion(text: unknown, usage: unknown = {}): unknown {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage,
  }
}

export function anthropicMessage(text: string, usage: unknown): unknown {
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'text', text },
      { type: 'text', text: ' Bye.' },
    ],
    stop_reason: 'end_turn',
    usage,
  }
}
