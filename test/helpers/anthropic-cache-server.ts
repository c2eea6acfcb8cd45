// A loopback server speaking Anthropic's Messages API with its prompt cache: a prefix up to a
// `cache_control` breakpoint is written to the cache (cache_creation_input_tokens) unless a cached
// prefix covers part of it (cache_read_input_tokens; Anthropic looks back up to 20 blocks before a
// breakpoint for the longest cached prefix). Tokens after the last breakpoint are input_tokens.
// A token here is a whitespace-separated word, so tests can count them by hand.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface AnthropicCacheServer {
  url: string
  /** Every request body received, in order. */
  bodies: Record<string, unknown>[]
  close(): Promise<void>
}

interface Block {
  text: string
  breakpoint: boolean
}

/** Words of a text: the server's token count. */
export const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

/** Answers each call with `answer(n)` (n = 1, 2, ...), output_tokens = its words. */
export async function startAnthropicCacheServer(
  answer: (n: number) => string,
): Promise<AnthropicCacheServer> {
  const bodies: Record<string, unknown>[] = []
  const cached = new Set<string>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
      bodies.push(body)
      const usage = cacheUsage(String(body['model']), blocksOf(body), cached)
      const text = answer(bodies.length)
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'request-id': `req_${bodies.length}`,
      })
      res.end(
        JSON.stringify({
          id: `msg_${bodies.length}`,
          type: 'message',
          role: 'assistant',
          model: body['model'],
          content: [{ type: 'text', text }],
          stop_reason: 'end_turn',
          usage: { ...usage, output_tokens: words(text) },
        }),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The prompt as Anthropic caches it: system blocks, then every message's content blocks. */
function blocksOf(body: Record<string, unknown>): Block[] {
  const out: Block[] = []
  const add = (content: unknown) => {
    if (typeof content === 'string') out.push({ text: content, breakpoint: false })
    else if (Array.isArray(content)) {
      for (const b of content as { text?: string; cache_control?: unknown }[]) {
        out.push({ text: b.text ?? '', breakpoint: b.cache_control !== undefined })
      }
    }
  }
  add(body['system'])
  for (const m of (body['messages'] ?? []) as { content: unknown }[]) add(m.content)
  return out
}

function cacheUsage(model: string, blocks: Block[], cached: Set<string>) {
  const key = (end: number) => JSON.stringify([model, blocks.slice(0, end + 1).map((b) => b.text)])
  const tokens = (from: number, to: number) =>
    blocks.slice(from, to + 1).reduce((n, b) => n + words(b.text), 0)
  const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []))
  const last = breakpoints.at(-1)
  if (last === undefined) {
    return {
      input_tokens: tokens(0, blocks.length - 1),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    }
  }
  let hit = -1
  for (let i = last; i >= Math.max(0, last - 20); i--) {
    if (cached.has(key(i))) {
      hit = i
      break
    }
  }
  for (const b of breakpoints) cached.add(key(b))
  return {
    input_tokens: tokens(last + 1, blocks.length - 1),
    cache_read_input_tokens: hit < 0 ? 0 : tokens(0, hit),
    cache_creation_input_tokens: tokens(hit + 1, last),
  }
}
