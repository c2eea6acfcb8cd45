// Anthropic's prompt cache, as the usage of an answer reports it: a prefix up to a
// `cache_control` breakpoint is written to the cache (cache_creation_input_tokens) unless a cached
// prefix covers part of it (cache_read_input_tokens; Anthropic looks back up to 20 blocks before a
// breakpoint for the longest cached prefix). Tokens after the last breakpoint are input_tokens.
// A token here is a whitespace-separated word, so tests can count them by hand.

interface Block {
  text: string
  breakpoint: boolean
}

export interface CacheUsage {
  input_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
}

/** Words of a text: the fake vendor's token count. */
export const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

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

/** A prompt cache of its own: each call's usage, writing the prefixes it marks. */
export function promptCache(): (body: Record<string, unknown>) => CacheUsage {
  const cached = new Set<string>()
  return (body) => {
    const blocks = blocksOf(body)
    const key = (end: number) =>
      JSON.stringify([String(body['model']), blocks.slice(0, end + 1).map((b) => b.text)])
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
}
