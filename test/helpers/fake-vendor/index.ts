/**
 * One fake vendor for the tests: a loopback server that answers as OpenAI's Chat Completions and
 * Anthropic's Messages APIs do (by route), recording every request, with a behaviour per option:
 *
 * - `capacity` (capacity.ts): calls held at once, a 429 + retry-after beyond it;
 * - `rpm` (budget.ts): a refilling per-minute budget announced in x-ratelimit-* headers;
 *   both may change by phase, after a number of accepted calls or a time since the first request;
 * - `failures` (failures.ts): a key refused or missing, a model unknown or forbidden, no credit,
 *   or a hang; `refuses`: prompts answered 400;
 * - `answer`, `usage`, `cache` (answers.ts, cache.ts): what a call is answered, with what usage,
 *   Anthropic's prompt cache accounting;
 * - `handle`: a test of one exchange answers each request itself.
 *
 * settings.ts points a Pacer database (useVendor, vendorDatabase) or environment (vendorEnv) at it.
 *
 * It keeps the books a test reads: requests, open and most open at once, answers given, 200s and
 * 400s per prompt, 429s, phase by phase.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createOpenAiCompatibleProvider } from '../../../src/main/engine/providers/openai'
import type { ChatMessage, Provider } from '../../../src/main/engine/core/types'
import { answerer, type Answered, type AnswerOptions } from './answers'
import { rpmBudget, type BudgetOptions } from './budget'
import {
  capacityGate,
  phaseIndex,
  type CapacityGate,
  rateLimited,
  type CapacityOptions,
  type Held,
  type PhaseStats,
} from './capacity'
import { dialectOf, openAiCompletion, promptOf, type Dialect } from './dialects'
import { failureOf, type Failures } from './failures'
import { json, send, serve, type OnRequest, type Recorded, type Served } from './server'

export * from './dialects'
export { variedUsage, type Answer, type Answered, type Usage } from './answers'
export { words } from './cache'
export type { Held, Phase, PhaseStats } from './capacity'
export type { Failures, Trouble } from './failures'
export { closedPort, closeVendors, json, send, type Recorded } from './server'
export { useVendor, vendorDatabase, vendorEnv, type Price } from './settings'

export type Handler = OnRequest

export interface FakeVendorOptions extends CapacityOptions, BudgetOptions, AnswerOptions {
  /** The API its `baseUrl` is for (OpenAI's ends in /v1); calls are answered by route. */
  dialect?: Dialect
  /** How long an accepted call takes. @default 0 */
  latencyMs?: number
  /** Latency varies by up to this fraction either way. @default 0 */
  jitter?: number
  /** Setup trouble: key, models, credit, hang. @default any key, any model, no trouble */
  failures?: Partial<Failures>
  /** Prompts answered 400 (the request itself refused). @default none */
  refuses?: (prompt: string) => boolean
  /** The port to listen on. @default any free one */
  port?: number
  /** Answers every request itself: the options above then do nothing. */
  handle?: Handler
}

export interface FakeVendor extends Served {
  /** The base URL a provider is given: OpenAI's ends in /v1, Anthropic's is `url`. */
  baseUrl: string
  /** Mutable: a test fixes the setup between runs. */
  failures: Failures
  /** Mutable, as `refuses` in the options. */
  refuses: (prompt: string) => boolean
  /** Every answer of the vendor's own making, in the order decided (on acceptance). */
  answers: Answered[]
  /** 200 answers sent, per prompt. */
  answered: Map<string, number>
  /** 400 answers sent (those `refuses` picked), per prompt. */
  refused: Map<string, number>
  ok: number
  /** 429s for capacity or budget. */
  throttled: number
  /** Most processes (a prompt's prefix before '-') with requests open at the same moment. */
  maxProcessesAtOnce: number
  /** Calls accepted and refused, phase by phase (a phase starts at a limit's `after`/`afterMs`). */
  phases: PhaseStats[]
  /** Calls holding capacity (accepted, or being refused slowly) at each change, in order. */
  held: Held[]
  totals(): { accepted: number; refused: number; maxOpen: number }
  /** Hung requests: when each arrived and when its connection closed. */
  hung: { arrived: number; closed: number | null }[]
  /** A task's answers to its last step: its prompt, and 1 + 2·(steps − 1) messages. */
  finalAnswers(prompt: string, steps: number): Answered[]
  /** Every answer to a task's prompt, all steps and executions. */
  requestsOf(prompt: string): Answered[]
}

/** Starts a fake vendor; see the module's comment for the options. */
export async function fakeVendor(options: FakeVendorOptions = {}): Promise<FakeVendor> {
  // Requests reach `respond` only once the port is known, after `v` is set.
  const gate = capacityGate(options)
  const respond = options.handle ?? responder(options, gate, () => v)
  const served = await serve((req, res, raw) => respond(req, res, raw), options.port)
  const answers: Answered[] = []
  const phases: PhaseStats[] = []
  const v: FakeVendor = Object.assign(served, {
    baseUrl: options.dialect === 'anthropic' ? served.url : `${served.url}/v1`,
    failures: { key: '', trouble: 'none' as const, ...options.failures },
    refuses: options.refuses ?? (() => false),
    answers,
    answered: new Map<string, number>(),
    refused: new Map<string, number>(),
    ok: 0,
    throttled: 0,
    maxProcessesAtOnce: 0,
    phases,
    held: gate.timeline,
    totals: () => ({
      accepted: phases.reduce((n, p) => n + p.accepted, 0),
      refused: phases.reduce((n, p) => n + p.refused, 0),
      maxOpen: Math.max(0, ...phases.map((p) => p.maxOpen)),
    }),
    hung: [],
    finalAnswers: (prompt: string, steps: number) =>
      answers.filter((a) => a.prompt === prompt && a.messages.length === 1 + 2 * (steps - 1)),
    requestsOf: (prompt: string) => answers.filter((a) => a.prompt === prompt),
  })
  return v
}

/** A server that answers every request with `handler` (a test of one exchange). */
export const vendor = (handler: Handler): Promise<FakeVendor> => fakeVendor({ handle: handler })

/** The request handler of a vendor with these options. */
function responder(
  options: FakeVendorOptions,
  gate: CapacityGate,
  vendorOf: () => FakeVendor,
): OnRequest {
  const budget = rpmBudget(options)
  const answer = answerer(options)
  const limits = [options.capacity, options.rpm]
  const processes = new Map<string, number>()
  let accepted = 0

  const holdProcess = (v: FakeVendor, prompt: string, res: ServerResponse) => {
    const proc = prompt.split('-')[0] ?? ''
    processes.set(proc, (processes.get(proc) ?? 0) + 1)
    const atOnce = [...processes.values()].filter((n) => n > 0).length
    v.maxProcessesAtOnce = Math.max(v.maxProcessesAtOnce, atOnce)
    res.on('close', () => processes.set(proc, (processes.get(proc) ?? 1) - 1))
  }

  return (req: Recorded, res: ServerResponse, _raw: IncomingMessage) => {
    const v = vendorOf()
    const dialect = dialectOf(req)
    if (!dialect) {
      const message = `no route ${req.method} ${req.path}`
      json(res, 404, { error: { type: 'not_found_error', message } })
      return
    }
    const n = v.requests.length
    const prompt = promptOf(req)
    const idHeader = { [dialect === 'openai' ? 'x-request-id' : 'request-id']: `req_${n}` }
    holdProcess(v, prompt, res)
    if (v.failures.trouble === 'hang') {
      const seen = { arrived: Date.now(), closed: null as number | null }
      v.hung.push(seen)
      res.on('close', () => (seen.closed = Date.now()))
      return
    }
    const failure = failureOf(dialect, v.failures, req)
    if (failure) {
      json(res, failure[0], failure[1], idHeader)
      return
    }

    const now = Date.now()
    const at = { accepted, sinceFirstMs: now - v.requests[0]!.at }
    const phase = (v.phases[phaseIndex(limits, at)] ??= {
      accepted: 0,
      refused: 0,
      maxOpen: 0,
    })
    phase.maxOpen = Math.max(phase.maxOpen, v.open)
    const refuse = (waitMs: number, headers: Record<string, string>) => {
      phase.refused++
      v.throttled++
      const delay = options.refuseAfterMs ?? 0
      if (delay === 0) return rateLimited(res, waitMs, headers)
      // A refusal takes a moment too, as a real provider's does, and holds capacity meanwhile.
      const release = gate.hold(res)
      setTimeout(() => {
        release()
        rateLimited(res, waitMs, headers)
      }, delay)
    }
    const wait = budget?.wait(now, at)
    if (budget && wait !== undefined) return refuse(wait, budget.headers(now, at))
    if (gate.full(at)) return refuse(gate.retryAfter(now), budget?.headers(now, at) ?? {})
    budget?.take()
    // As the vendors count: the budget as of the call's arrival, sent with its answer.
    const headers = { ...budget?.headers(now, at), ...idHeader }
    accepted++
    phase.accepted++

    const jitter = options.jitter ?? 0
    const latency = (options.latencyMs ?? 0) * (1 - jitter + Math.random() * 2 * jitter)
    const release = gate.hold(res, now + latency)
    const refused = v.refuses(prompt)
    const decided = refused ? undefined : answer(dialect, req, n)
    if (decided?.answered) v.answers.push(decided.answered)
    setTimeout(() => {
      release()
      if (!decided) {
        v.refused.set(prompt, (v.refused.get(prompt) ?? 0) + 1)
        const error = { message: 'prompt refused', type: 'invalid_request_error' }
        json(res, 400, { error }, idHeader)
        return
      }
      if (decided.status === 200) {
        v.ok++
        v.answered.set(prompt, (v.answered.get(prompt) ?? 0) + 1)
      }
      send(res, decided.status, decided.body, headers)
    }, latency)
  }
}

/**
 * Answers as OpenAI's Chat Completions and Anthropic's Messages APIs do, by route (a 200 with the
 * vendor's body shape and usage), and any other route with a vendor-shaped 404: one server for a
 * test that only needs to see who received which key.
 */
export const eitherDialect: Handler = (req, res) => {
  const model = req.body['model']
  if (dialectOf(req) === 'openai') {
    const body = openAiCompletion('ok', {
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
    })
    json(res, 200, { ...(body as object), model })
  } else if (dialectOf(req) === 'anthropic') {
    json(res, 200, {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 2 },
    })
  } else {
    json(res, 404, {
      error: { type: 'not_found_error', message: `no route ${req.method} ${req.path}` },
    })
  }
}

export const USER: ChatMessage[] = [{ role: 'user', content: 'Say hi.' }]
// Looks like a real key and occurs nowhere else, so any leak is found by a plain substring search.
export const SENTINEL_KEY = 'sk-SENTINEL-9f8e7d6c5b4a3210-DO-NOT-LEAK'

export function openAi(base: string, key: string | null = null, extra = {}): Provider {
  return createOpenAiCompatibleProvider({
    id: 'openai-compatible',
    baseUrl: `${base}/v1`,
    apiKey: () => key,
    ...extra,
  })
}
