// A drawn provider served in real time: a loopback server speaking OpenAI's Chat Completions that
// answers each call through familyProvider(draw, start).call(task), the task found by the id its
// prompt names. It keeps the books the bench reads: attempts, refusals, the last answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ProviderResponse } from '../../src/main/engine/core/types'
import {
  drawTasks,
  familyProvider,
  type FamilyProvider,
  type ProviderDraw,
} from '../scheduler/family'
import { openAiCompletion, openAiError } from '../../test/helpers/fake-vendor/dialects'
import { taskIdOf } from './draws'

export interface LiveServer {
  /** The base URL an openai-compatible provider is given (ends in /v1). */
  baseUrl: string
  /**
   * The draw, its clock started at the first call. A method, not a getter, because asking for it
   * before any call came starts the clock now (a leg with no call keeps its books from then).
   */
  provider(): FamilyProvider
  /** When the draw's clock started: the first call's arrival (Date.now()). */
  firstCall: Promise<number>
  /** Calls received, and those refused (429, 503, 529). */
  attempts: number
  refused: number
  /** 200s per task id: each should be answered once. */
  answered: Map<number, number>
  /** Date.now() of the last 200 sent; 0 before one. */
  lastAnswer: number
  /** Requests that named no task of the draw (answered 400). */
  strays: number
  close(): Promise<void>
}

const THROTTLES = new Set([429, 503, 529])

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function promptOf(raw: string): string {
  try {
    const body = JSON.parse(raw) as { messages?: { role?: string; content?: unknown }[] }
    const user = body.messages?.find((m) => m.role === 'user')?.content
    return typeof user === 'string' ? user : ''
  } catch {
    return ''
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** The body an OpenAI-compatible server sends with this answer: usage on a 200, an error else. */
function bodyOf(answer: ProviderResponse): unknown {
  if (answer.status === 200) {
    const input = answer.usage?.inputTokens ?? 0
    const output = answer.usage?.outputTokens ?? 0
    const usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output }
    return openAiCompletion(answer.text ?? '', usage)
  }
  if (answer.status === 429) {
    return openAiError('Rate limit reached for requests', 'requests', 'rate_limit_exceeded')
  }
  return openAiError(answer.error ?? 'overloaded', 'server_error', null)
}

/**
 * Serves `draw` on 127.0.0.1. The draw's warm-up starts at the first call, as its virtual-time
 * twin's starts at the twin's first admission: started with the server, it ran ahead of the
 * `pacer run` process by the process's own start (spawn, database, 0.4-0.7 s here), every phase
 * came that much sooner for the live process, and on draws of phases near a round trip that alone
 * parted the legs (#100004, 1-s phases at 1.7-s answers: 85-88 % live against 61.3 % virtual
 * three runs running; its twin started 0.4-0.7 s late in virtual time, 85.5-86.8 %).
 */
export async function liveServer(draw: ProviderDraw): Promise<LiveServer> {
  const tasks = drawTasks(draw)
  let provider: FamilyProvider | null = null
  let started: (at: number) => void = () => undefined
  const firstCall = new Promise<number>((resolve) => (started = resolve))
  const clock = (): FamilyProvider => {
    if (provider === null) {
      const at = Date.now()
      provider = familyProvider(draw, at)
      started(at)
    }
    return provider
  }
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req)
    const id = req.url?.endsWith('/chat/completions') ? taskIdOf(promptOf(raw)) : undefined
    const task = id === undefined ? undefined : tasks[id]
    if (!task) {
      live.strays++
      send(res, 400, openAiError('no such task', 'invalid_request_error', null))
      return
    }
    live.attempts++
    const answer = await clock().call(task)
    if (THROTTLES.has(answer.status)) live.refused++
    else if (answer.status === 200) {
      live.answered.set(task.id, (live.answered.get(task.id) ?? 0) + 1)
      live.lastAnswer = Math.max(live.lastAnswer, Date.now())
    }
    send(res, answer.status, bodyOf(answer), answer.headers)
  }
  const server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const live: LiveServer = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    provider: clock,
    firstCall,
    attempts: 0,
    refused: 0,
    answered: new Map(),
    lastAnswer: 0,
    strays: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return live
}
