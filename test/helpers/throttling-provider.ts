/**
 * A loopback server speaking OpenAI's chat completions API that throttles like a provider: a
 * hidden concurrency capacity (429 with retry-after beyond it), and optionally a requests-per-
 * minute bucket announced in `x-ratelimit-*` headers. Both can change after a number of accepted
 * calls, so a test sees how a client follows a capacity that moves mid-run. It keeps the books a
 * test needs: calls accepted and refused per phase, the most requests it saw at once, and how
 * many times each prompt was answered.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A value that holds from the `after`-th accepted call on. */
export interface Phase {
  after: number
  value: number
}

export interface ThrottlingOptions {
  /** Hidden concurrency capacity by phase. @default unlimited */
  concurrency?: Phase[]
  /** Requests per minute by phase, refilled continuously and announced in headers. @default none */
  requestsPerMinute?: Phase[]
  /** What the bucket holds at start (someone used part of it). @default the first limit */
  initialRemaining?: number
  /** Latency of an accepted call. @default 60 */
  latencyMs?: number
}

export interface PhaseStats {
  accepted: number
  refused: number
  /** The most requests open at once (accepted in flight plus the one arriving). */
  maxOpen: number
}

export interface ThrottlingProvider {
  /** Base URL for the openai-compatible provider (ends in /v1). */
  url: string
  phases: PhaseStats[]
  /** Times each distinct prompt was answered 200. */
  answered: Map<string, number>
  totals(): { accepted: number; refused: number; maxOpen: number }
  close(): Promise<void>
}

function valueAt(phases: Phase[] | undefined, accepted: number): number {
  if (!phases) return Number.POSITIVE_INFINITY
  let value = phases[0]!.value
  for (const p of phases) if (accepted >= p.after) value = p.value
  return value
}

function phaseIndex(options: ThrottlingOptions, accepted: number): number {
  const all = [...(options.concurrency ?? []), ...(options.requestsPerMinute ?? [])]
  return new Set(all.filter((p) => p.after > 0 && accepted >= p.after).map((p) => p.after)).size
}

function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

export async function startThrottlingProvider(
  options: ThrottlingOptions,
): Promise<ThrottlingProvider> {
  const latencyMs = options.latencyMs ?? 60
  let accepted = 0
  let inflight = 0
  let open = 0
  const ends: number[] = []
  const phases: PhaseStats[] = []
  const answered = new Map<string, number>()
  const bucket = {
    level: options.initialRemaining ?? valueAt(options.requestsPerMinute, 0),
    at: Date.now(),
  }
  const stats = () =>
    (phases[phaseIndex(options, accepted)] ??= { accepted: 0, refused: 0, maxOpen: 0 })

  /** The bucket's refill per ms and level now; undefined without a requests budget. */
  const budget = (now: number) => {
    if (!options.requestsPerMinute) return undefined
    const limit = valueAt(options.requestsPerMinute, accepted)
    const perMs = limit / 60_000
    bucket.level = Math.min(limit, bucket.level + perMs * (now - bucket.at))
    bucket.at = now
    return { limit, perMs }
  }
  const budgetHeaders = (now: number): Record<string, string> => {
    const b = budget(now)
    if (!b) return {}
    const level = Math.max(0, bucket.level)
    return {
      'x-ratelimit-limit-requests': String(b.limit),
      'x-ratelimit-remaining-requests': String(Math.floor(level)),
      'x-ratelimit-reset-requests': `${Math.ceil((b.limit - level) / b.perMs)}ms`,
    }
  }

  const refuse = (res: ServerResponse, waitMs: number, headers: Record<string, string>) => {
    stats().refused++
    const wait = Math.max(1, Math.ceil(waitMs))
    json(
      res,
      429,
      {
        error: {
          message: 'Rate limit reached for requests. Please try again later.',
          type: 'requests',
          code: 'rate_limit_exceeded',
        },
      },
      { ...headers, 'retry-after-ms': String(wait), 'retry-after': String(Math.ceil(wait / 1000)) },
    )
  }

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      json(res, 404, { error: { message: `no route ${req.url}` } })
      return
    }
    const now = Date.now()
    open++
    const s = stats()
    s.maxOpen = Math.max(s.maxOpen, open)
    res.on('close', () => open--)
    const b = budget(now)
    if (b && bucket.level < 1) {
      refuse(res, (1 - bucket.level) / b.perMs, budgetHeaders(now))
      return
    }
    if (inflight >= valueAt(options.concurrency, accepted)) {
      const earliest = Math.min(...ends)
      refuse(res, Number.isFinite(earliest) ? earliest - now : 50, budgetHeaders(now))
      return
    }
    if (b) bucket.level -= 1
    // As the vendors count: the budget as of the call's arrival, sent with its answer.
    const headers = budgetHeaders(now)
    accepted++
    s.accepted++
    inflight++
    const end = now + latencyMs * (0.8 + Math.random() * 0.4)
    ends.push(end)
    const prompt = JSON.stringify((JSON.parse(body) as { messages: unknown }).messages)
    setTimeout(() => {
      inflight--
      ends.splice(ends.indexOf(end), 1)
      answered.set(prompt, (answered.get(prompt) ?? 0) + 1)
      json(
        res,
        200,
        {
          id: `chatcmpl-${accepted}`,
          object: 'chat.completion',
          model: 'm',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'done.' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 },
        },
        headers,
      )
    }, end - now)
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    phases,
    answered,
    totals: () => ({
      accepted: phases.reduce((n, p) => n + p.accepted, 0),
      refused: phases.reduce((n, p) => n + p.refused, 0),
      maxOpen: Math.max(0, ...phases.map((p) => p.maxOpen)),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
