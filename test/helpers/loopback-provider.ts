// A local model server speaking OpenAI's chat completions, with a hidden concurrency capacity
// and 429 + retry-after beyond it: what several `pacer run` processes pace against. It counts
// what it sees: calls at once, per process (the prompt's prefix before '-'), and when each came.
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { openDatabase } from '../../src/main/engine/db'
import { SettingsStore } from '../../src/main/engine/settings/settings'
import { startPacer, writeJsonl } from './cli'

export interface LoopbackProvider {
  url: string
  /** Most calls the provider held at once (refused ones included, while being refused). */
  maxConcurrent: number
  /** Calls held now. */
  current: number
  /** Most processes (by task prefix) with calls held at the same moment. */
  maxProcessesAtOnce: number
  ok: number
  throttled: number
  /** 200 answers per prompt. */
  answered: Map<string, number>
  /** 400 answers per prompt (those `refuses` picked). */
  refused: Map<string, number>
  /** Prompts answered 400 (the request itself refused), as long as it says so: settable. */
  refuses: (prompt: string) => boolean
  /** When each call arrived (Date.now()), refused ones included. */
  arrivals: number[]
  close(): Promise<void>
}

const servers: LoopbackProvider[] = []

/** Closes every provider started since the last call (a test's afterEach). */
export async function closeProviders(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()))
}

function json(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** A local model server: `capacity` calls at once, `latencyMs` each, 429 + retry-after beyond. */
export async function loopbackProvider(
  capacity: number,
  latencyMs: number,
): Promise<LoopbackProvider> {
  const held = new Map<string, number>()
  const p: LoopbackProvider = {
    url: '',
    maxConcurrent: 0,
    current: 0,
    maxProcessesAtOnce: 0,
    ok: 0,
    throttled: 0,
    answered: new Map(),
    refused: new Map(),
    refuses: () => false,
    arrivals: [],
    close: async () => {},
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        messages: { content: string }[]
      }
      const prompt = body.messages.at(-1)?.content ?? ''
      const proc = prompt.split('-')[0] ?? ''
      p.arrivals.push(Date.now())
      p.current++
      p.maxConcurrent = Math.max(p.maxConcurrent, p.current)
      held.set(proc, (held.get(proc) ?? 0) + 1)
      p.maxProcessesAtOnce = Math.max(
        p.maxProcessesAtOnce,
        [...held.values()].filter((n) => n > 0).length,
      )
      let finished = false
      res.on('close', () => {
        if (finished) return
        finished = true
        p.current--
        held.set(proc, (held.get(proc) ?? 1) - 1)
      })
      if (p.current > capacity) {
        p.throttled++
        // A refusal takes a moment too, as a real provider's does.
        setTimeout(
          () =>
            json(
              res,
              429,
              { error: { message: 'Too many requests', type: 'rate_limit_exceeded' } },
              { 'retry-after-ms': '100' },
            ),
          20,
        )
        return
      }
      setTimeout(() => {
        if (p.refuses(prompt)) {
          p.refused.set(prompt, (p.refused.get(prompt) ?? 0) + 1)
          json(res, 400, { error: { message: 'prompt refused', type: 'invalid_request_error' } })
          return
        }
        p.ok++
        p.answered.set(prompt, (p.answered.get(prompt) ?? 0) + 1)
        json(res, 200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: 'local',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
        })
      }, latencyMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  p.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  servers.push(p)
  return p
}

/** A database whose openai-compatible provider is the loopback server, as Settings would set it. */
export function databaseFor(dir: string, provider: { url: string }): string {
  const path = join(dir, 'pacer.db')
  const db = openDatabase(path)
  new SettingsStore(db).set({ baseUrls: { 'openai-compatible': provider.url } })
  db.close()
  return path
}

/** `n` distinct tasks whose prompts start with `proc-`. */
export function batch(dir: string, proc: string, n: number): string {
  const tasks = Array.from({ length: n }, (_, i) => ({
    type: 'classify',
    payload: { prompt: `${proc}-task-${i}` },
  }))
  return writeJsonl(dir, `${proc}.jsonl`, tasks)
}

/** `pacer run FILE --db DB --json` against the loopback provider (databaseFor points it there). */
export function runOnLoopback(
  file: string,
  db: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
): ReturnType<typeof startPacer> {
  return startPacer(
    [
      'run',
      file,
      '--db',
      db,
      '--json',
      '--provider',
      'openai-compatible',
      '--model',
      'local',
      ...extra,
    ],
    env,
  )
}
