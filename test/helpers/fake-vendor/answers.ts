// What the fake vendor answers a call it accepts: by default an answer of the call's own (a
// counter in the text, so a test can tell, task by task, which answer went where), or what the
// test's `answer` says. A prompt containing `truncate` is answered as cut off (finish reason
// "length"). Every default or text answer is kept in the books with its usage.
import { promptCache, words } from './cache'
import { answerBody, messagesOf, modelOf, promptOf, type Dialect, type Message } from './dialects'
import type { Recorded } from './server'

export interface Tokens {
  input: number
  output: number
}

export interface Answered {
  messages: Message[]
  /** The first user message: the task's prompt. */
  prompt: string
  text: string
  finishReason: 'stop' | 'length'
  message: { role: 'assistant'; content: string }
  usage: Tokens
}

/**
 * A test's answer to call `n` (1-based, of every request received): the text of an answer, a whole
 * response sent as is (an object as JSON, a string as it stands), or undefined for the default.
 */
export type Answer = (
  req: Recorded,
  n: number,
) => string | { status?: number; body: unknown } | undefined

/** Tokens a call is billed: the same for all, or by call. */
export type Usage = Tokens | ((call: { n: number; messages: Message[] }) => Tokens)

export interface AnswerOptions {
  answer?: Answer
  /** @default 12 input and 3 output tokens */
  usage?: Usage
  /** Anthropic's prompt cache accounting (cache.ts): usage counts words. @default false */
  cache?: boolean
}

/** Usage that differs call by call (by the prompt's length and the call's number). */
export const variedUsage: Usage = ({ n, messages }) => {
  const chars = messages.reduce((sum, m) => sum + m.content.length, 0)
  return { input: 10 + Math.ceil(chars / 4), output: 3 + (n % 17) }
}

export interface Decided {
  status: number
  body: unknown
  /** Set for an answer of the vendor's own making (not a whole response from `answer`). */
  answered?: Answered
}

function usageBody(dialect: Dialect, tokens: Tokens): unknown {
  return dialect === 'openai'
    ? {
        prompt_tokens: tokens.input,
        completion_tokens: tokens.output,
        total_tokens: tokens.input + tokens.output,
      }
    : { input_tokens: tokens.input, output_tokens: tokens.output }
}

/** Decides the answers of one vendor, call by call. */
export function answerer(options: AnswerOptions) {
  const cache = options.cache ? promptCache() : undefined
  return (dialect: Dialect, req: Recorded, n: number): Decided => {
    const given = options.answer?.(req, n)
    if (given !== undefined && typeof given !== 'string') {
      return { status: given.status ?? 200, body: given.body }
    }
    const messages = messagesOf(req)
    const prompt = promptOf(req)
    const text =
      given ?? `answer ${n} to "${prompt.slice(0, 40)}" after ${messages.length} message(s)`
    const finishReason = prompt.includes('truncate') ? 'length' : 'stop'
    const model = modelOf(req)
    if (cache) {
      const usage = { ...cache(req.body), output_tokens: words(text) }
      const answered: Answered = {
        messages,
        prompt,
        text,
        finishReason,
        message: { role: 'assistant', content: text },
        usage: { input: usage.input_tokens, output: usage.output_tokens },
      }
      return {
        status: 200,
        body: answerBody(dialect, n, model, text, finishReason, usage),
        answered,
      }
    }
    const u = options.usage ?? { input: 12, output: 3 }
    const tokens = typeof u === 'function' ? u({ n, messages }) : u
    const answered: Answered = {
      messages,
      prompt,
      text,
      finishReason,
      message: { role: 'assistant', content: text },
      usage: tokens,
    }
    const body = answerBody(dialect, n, model, text, finishReason, usageBody(dialect, tokens))
    return { status: 200, body, answered }
  }
}
