/**
 * A loopback server speaking OpenAI's chat completions API that gives every request an answer of
 * its own (a counter in the text) and keeps the books: each request's messages with the answer,
 * usage and finish reason it got, so a test can say, task by task, what the server answered. A
 * prompt containing `truncate` is answered with `finish_reason: "length"`.
 */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createEngine } from '../../src/main/engine/app/engine'

export interface AnsweredRequest {
  messages: { role: string; content: string }[]
  /** The first user message: the task's prompt. */
  prompt: string
  text: string
  finishReason: string
  message: { role: 'assistant'; content: string }
  usage: { prompt_tokens: number; completion_tokens: number }
}

export interface AnsweringProvider {
  /** Base URL for the openai-compatible provider (ends in /v1). */
  url: string
  answered: AnsweredRequest[]
  /** Requests received and not yet answered (or given up by the client). */
  open: number
  /** The answer to a task's last step: its prompt, and 1 + 2·(steps − 1) messages. */
  finalAnswers(prompt: string, steps: number): AnsweredRequest[]
  /** Every request of a task's execution(s), all steps. */
  requestsOf(prompt: string): AnsweredRequest[]
  close(): Promise<void>
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' })
  res.end(JSON.stringify(body))
}

/**
 * A new database whose Settings send `openai-compatible` to the server, with model `m` priced
 * (USD per 1M tokens, i.e. micro-dollars per token).
 */
export async function databaseFor(
  dbPath: string,
  server: AnsweringProvider,
  price: { input: number; cachedInput: number; cacheWrite: number; output: number },
): Promise<void> {
  const engine = createEngine({ dbPath })
  await engine.handlers['settings:set']({
    baseUrls: { 'openai-compatible': server.url },
    priceOverrides: { m: price },
  })
  await engine.shutdown()
}

/** Starts the server; `latencyMs` delays each answer, so duplicates meet a running claim. */
export async function startAnsweringProvider(latencyMs = 5): Promise<AnsweringProvider> {
  const answered: AnsweredRequest[] = []
  let n = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        json(res, 404, { error: { message: `no route ${req.url}` } })
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        messages: AnsweredRequest['messages']
      }
      const prompt = body.messages.find((m) => m.role === 'user')?.content ?? ''
      n++
      const text = `answer ${n} to "${prompt.slice(0, 40)}" after ${body.messages.length} message(s)`
      const chars = body.messages.reduce((sum, m) => sum + m.content.length, 0)
      const usage = { prompt_tokens: 10 + Math.ceil(chars / 4), completion_tokens: 3 + (n % 17) }
      const finishReason = prompt.includes('truncate') ? 'length' : 'stop'
      const message = { role: 'assistant' as const, content: text }
      answered.push({ messages: body.messages, prompt, text, finishReason, message, usage })
      provider.open++
      res.on('close', () => provider.open--)
      setTimeout(() => {
        json(res, 200, {
          id: `chatcmpl-${n}`,
          object: 'chat.completion',
          model: 'm',
          choices: [{ index: 0, message, finish_reason: finishReason }],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        })
      }, latencyMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const provider: AnsweringProvider = {
    url: `http://127.0.0.1:${port}/v1`,
    answered,
    open: 0,
    finalAnswers: (prompt, steps) =>
      answered.filter((a) => a.prompt === prompt && a.messages.length === 1 + 2 * (steps - 1)),
    requestsOf: (prompt) => answered.filter((a) => a.prompt === prompt),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return provider
}
