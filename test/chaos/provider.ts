/**
 * The chaos run's provider: a loopback server that speaks OpenAI's chat completions API, holds
 * `capacity` calls at once (429 beyond) and, by a seeded draw per request, answers 429 (with
 * retry-after-ms), 503, 500, hangs until the client gives up, or drops the connection without an
 * answer. Everything else is a 200 with usage that
 * depends only on the request, so what it served can be compared with what the ledger says: the
 * answers it started (each one is billed, whether or not the client lived to read it), their tokens,
 * and how many times it answered each conversation.
 */
import { createHash } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { seededRandom } from '../helpers/random'

export interface FaultRates {
  throttle: number
  overloaded: number
  serverError: number
  hang: number
  drop: number
  /** A 200 billed as usual whose usage is garbage: negative, a string, an object, above 2^53. */
  hostileUsage: number
}

export const DEFAULT_FAULTS: FaultRates = {
  throttle: 0.05,
  overloaded: 0.02,
  serverError: 0.02,
  hang: 0.005,
  drop: 0.01,
  hostileUsage: 0.03,
}

export interface Served {
  /** 200 answers written, and their tokens. */
  calls: number
  /** Of them, answers whose usage was garbage (the ledger must estimate them, never $0). */
  hostileUsage: number
  inputTokens: number
  outputTokens: number
  /** Requests by fault: throttle, overloaded, serverError, hang, drop, ok. */
  byKind: Record<string, number>
  /** 200 answers per conversation (hash of the messages): >1 means a call was paid twice. */
  perConversation: Map<string, number>
}

export interface ChaosProvider {
  /** Base URL for the openai-compatible provider (ends in /v1). */
  url: string
  served: Served
  /** Faults off (the final clean pass) or on. */
  setFaults(rates: FaultRates | null): void
  close(): Promise<void>
}

interface ChatBody {
  model?: string
  messages?: { role: string; content: unknown }[]
}

/** A conversation's identity: the messages as sent. */
function conversationHash(body: ChatBody): string {
  return createHash('sha256')
    .update(JSON.stringify(body.messages ?? []))
    .digest('hex')
    .slice(0, 16)
}

function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

function draw(random: () => number, rates: FaultRates | null): keyof FaultRates | 'ok' {
  if (rates === null) return 'ok'
  let x = random()
  for (const kind of Object.keys(rates) as (keyof FaultRates)[]) {
    if (x < rates[kind]) return kind
    x -= rates[kind]
  }
  return 'ok'
}

/** Starts the provider on a free loopback port. */
export async function startChaosProvider(
  seed: number,
  { latencyMs = 250, capacity = 8 } = {},
): Promise<ChaosProvider> {
  const random = seededRandom(seed)
  let rates: FaultRates | null = DEFAULT_FAULTS
  const served: Served = {
    calls: 0,
    hostileUsage: 0,
    inputTokens: 0,
    outputTokens: 0,
    byKind: {},
    perConversation: new Map(),
  }
  let held = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      held++
      res.on('close', () => held--)
      // Beyond its capacity it refuses as a busy provider does; otherwise the seeded faults.
      const kind = held > capacity ? 'throttle' : draw(random, rates)
      served.byKind[kind] = (served.byKind[kind] ?? 0) + 1
      const wait = latencyMs * (0.5 + random())
      if (kind === 'hang') return
      if (kind === 'drop') {
        setTimeout(() => req.socket.destroy(), wait)
        return
      }
      if (kind === 'throttle') {
        const error = {
          message: 'Rate limit reached',
          type: 'requests',
          code: 'rate_limit_exceeded',
        }
        json(res, 429, { error }, { 'retry-after-ms': '200' })
        return
      }
      if (kind === 'overloaded' || kind === 'serverError') {
        const status = kind === 'overloaded' ? 503 : 500
        setTimeout(
          () => json(res, status, { error: { message: 'try again', type: 'server' } }),
          wait,
        )
        return
      }
      // Billed once it starts on the answer, like a hosted model: a client that goes away (killed)
      // while it generates has paid all the same.
      const body = bill(raw, served)
      if (kind === 'hostileUsage') {
        served.hostileUsage++
        ;(body as { usage: unknown }).usage = HOSTILE_USAGE[served.hostileUsage % 4]
      }
      setTimeout(() => {
        if (!res.destroyed) json(res, 200, body)
      }, wait)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    served,
    setFaults: (next) => (rates = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Usage a hostile or broken provider reports for a call it bills all the same. */
const HOSTILE_USAGE: unknown[] = [
  { prompt_tokens: -50, completion_tokens: -3, total_tokens: -53 },
  { prompt_tokens: '120', completion_tokens: 'seven', total_tokens: '127' },
  { prompt_tokens: { n: 1 }, completion_tokens: null },
  { prompt_tokens: 2 ** 60, completion_tokens: 2 ** 60 },
]

/** A 200 whose tokens depend only on the request, counted as served (billed) when made. */
function bill(raw: string, served: Served): unknown {
  const body = JSON.parse(raw) as ChatBody
  const conversation = conversationHash(body)
  const promptTokens = Math.ceil(raw.length / 4)
  const completionTokens = 3 + (parseInt(conversation.slice(0, 2), 16) % 8)
  served.calls++
  served.inputTokens += promptTokens
  served.outputTokens += completionTokens
  served.perConversation.set(conversation, (served.perConversation.get(conversation) ?? 0) + 1)
  return {
    id: `chatcmpl-${served.calls}`,
    object: 'chat.completion',
    model: body.model ?? 'chaos',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: `answer ${conversation}` },
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  }
}
