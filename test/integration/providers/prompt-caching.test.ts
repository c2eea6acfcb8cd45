/**
 * Anthropic prompt caching end to end: the real engine (SQLite file, runner, ledger) and `pacer`
 * processes against a loopback server that speaks the Messages API and caches like it (test/helpers
 * /fake-vendor/cache.ts: a token is a word). Every amount below is computed by hand from
 * claude-sonnet-4-5's prices: input $3, cache read $0.30, cache write $3.75, output $15 per 1M
 * tokens, so N tokens at $P cost N × P micro-dollars.
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import type { SecretsAccess } from '../../../src/main/engine/app/secrets'
import { fakeVendor, words, type FakeVendor } from '../../helpers/fake-vendor'
import { query, runPacer, tempDir, until, writeJsonl } from '../../helpers/cli'

const MODEL = 'claude-sonnet-4-5'
// 2,000 and 100 tokens (words) for the server.
const SYSTEM = Array.from({ length: 2000 }, (_, i) => `rule${i}`).join(' ')
const PROMPT = Array.from({ length: 100 }, (_, i) => `fact${i}`).join(' ')
const ANSWER = (n: number) => `Answer ${n} done.` // 3 tokens
const EPHEMERAL = { type: 'ephemeral' }

/** A vendor that caches like Anthropic and answers call n with ANSWER(n). */
const cachingVendor = () =>
  fakeVendor({ dialect: 'anthropic', cache: true, answer: (_req, n) => ANSWER(n) })
const bodiesOf = (server: FakeVendor) => server.requests.map((r) => r.body)

const agentTask = {
  type: 'agent',
  payload: { system: SYSTEM, prompt: PROMPT },
  steps: 3,
  provider: 'anthropic',
  model: MODEL,
}

/** A key stored in Settings for the server's URL: the only URL it may go to. */
let serverUrl = ''
const secrets: SecretsAccess = {
  get: (id) => (id === 'anthropic' ? 'sk-ant-test-key' : null),
  keysFrom: 'store',
  storedFor: (id) => (id === 'anthropic' ? serverUrl : undefined),
  available: false,
  reason: 'test',
}

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

async function setup(promptCaching?: boolean) {
  const server = await cachingVendor()
  cleanup.push(() => server.close())
  serverUrl = server.baseUrl
  const dbPath = join(tempDir(), 'pacer.db')
  const engine = createEngine({ dbPath, secrets, eventIntervalMs: 20 })
  cleanup.push(() => engine.shutdown({ graceMs: 0 }))
  // Stored directly: the handler refuses to move a provider whose key it cannot remove.
  engine.settings.set({ baseUrls: { anthropic: server.baseUrl } })
  if (promptCaching !== undefined) await engine.handlers['settings:set']({ promptCaching })
  engine.start()
  return { server, engine, dbPath }
}

async function runBatch(engine: Engine, tasks: object[]): Promise<string> {
  const { batchId } = await engine.handlers['tasks:enqueue']({ tasks: tasks as never })
  await until(() => {
    const counts = engine.queue.batch(batchId)?.counts
    return counts !== undefined && counts.queued === 0 && counts.running === 0
  })
  expect(engine.queue.batch(batchId)?.counts.failed).toBe(0)
  return batchId
}

interface Row {
  step: number
  input: number
  cached: number
  written: number
  output: number
  cost: number
  saved: number | null
  extra: number | null
}

const rowsOf = (engine: Engine, type: string): Row[] =>
  engine.db
    .prepare(
      `SELECT step, input_tokens AS input, cached_input_tokens AS cached,
         cache_write_tokens AS written, output_tokens AS output, cost_micros AS cost,
         cache_saved_micros AS saved, cache_write_extra_micros AS extra
       FROM ledger WHERE task_type = ? AND outcome = 'executed' ORDER BY step`,
    )
    .all(type) as Row[]

const systemBlock = { type: 'text', text: SYSTEM, cache_control: EPHEMERAL }
const marked = (text: string) => [{ type: 'text', text, cache_control: EPHEMERAL }]
const cont = (step: number) => `Continue: step ${step} of 3.` // 5 tokens

describe('Anthropic prompt caching', () => {
  it('marks the prefix of every step; the ledger holds the cache reads and writes it answered', async () => {
    const { server, engine } = await setup()
    await runBatch(engine, [agentTask])

    // The bodies: the system prompt and the last turn carry cache_control, nothing else does.
    expect(bodiesOf(server).map((b) => [b['system'], b['messages']])).toEqual([
      [[systemBlock], [{ role: 'user', content: marked(PROMPT) }]],
      [
        [systemBlock],
        [
          { role: 'user', content: PROMPT },
          { role: 'assistant', content: ANSWER(1) },
          { role: 'user', content: marked(cont(2)) },
        ],
      ],
      [
        [systemBlock],
        [
          { role: 'user', content: PROMPT },
          { role: 'assistant', content: ANSWER(1) },
          { role: 'user', content: cont(2) },
          { role: 'assistant', content: ANSWER(2) },
          { role: 'user', content: marked(cont(3)) },
        ],
      ],
    ])
    expect(words(SYSTEM) + words(PROMPT)).toBe(2100)
    expect(words(ANSWER(1)) + words(cont(2))).toBe(8)

    // Step 1 writes system + prompt (2,100); step 2 reads them and writes answer 1 + continue
    // (8); step 3 reads those 2,108 and writes 8 more. Each answer is 3 output tokens (45 µ$).
    expect(rowsOf(engine, 'agent')).toEqual([
      // 2,100 × $3.75 + 45 = 7,920; extra 2,100 × ($3.75 − $3) = 1,575
      {
        step: 1,
        input: 2100,
        cached: 0,
        written: 2100,
        output: 3,
        cost: 7920,
        saved: 0,
        extra: 1575,
      },
      // 2,100 × $0.30 + 8 × $3.75 + 45 = 630 + 30 + 45; saved 2,100 × $2.70 = 5,670; extra 6
      {
        step: 2,
        input: 2108,
        cached: 2100,
        written: 8,
        output: 3,
        cost: 705,
        saved: 5670,
        extra: 6,
      },
      // 2,108 × $0.30 = 632.4, + 30 + 45 = 707.4 → 707; saved 2,108 × $2.70 = 5,691.6 → 5,692
      {
        step: 3,
        input: 2116,
        cached: 2108,
        written: 8,
        output: 3,
        cost: 707,
        saved: 5692,
        extra: 6,
      },
    ])

    // A single-step task with the same system prompt reads it from the cache; its own prompt is
    // not marked (no later step resends it).
    const question = 'Which rule applies here today?' // 5 tokens
    await runBatch(engine, [
      { ...agentTask, type: 'classify', steps: 1, payload: { system: SYSTEM, prompt: question } },
    ])
    expect(bodiesOf(server)[3]).toMatchObject({
      system: [systemBlock],
      messages: [{ role: 'user', content: question }],
    })
    // 5 × $3 + 2,000 × $0.30 + 45 = 15 + 600 + 45 = 660; saved 2,000 × $2.70 = 5,400
    expect(rowsOf(engine, 'classify')).toEqual([
      {
        step: 1,
        input: 2005,
        cached: 2000,
        written: 0,
        output: 3,
        cost: 660,
        saved: 5400,
        extra: 0,
      },
    ])

    const { byType, totals } = await engine.handlers['ledger:rollup']({})
    expect(byType.find((t) => t.taskType === 'agent')).toMatchObject({
      cachedInputTokens: 4208,
      cacheWriteTokens: 2116,
      costMicros: 9332,
      cacheSavedMicros: 11_362,
      cacheWriteExtraMicros: 1587,
    })
    expect(totals).toMatchObject({
      cachedInputTokens: 6208,
      cacheWriteTokens: 2116,
      costMicros: 9992,
      cacheSavedMicros: 16_762,
      cacheWriteExtraMicros: 1587,
    })
  })

  it('sends no cache_control with the setting off, and pays full input for the resent history', async () => {
    const { server, engine } = await setup(false)
    expect((await engine.handlers['settings:get']({})).promptCaching).toBe(false)
    await runBatch(engine, [agentTask])
    expect(bodiesOf(server)).toHaveLength(3)
    expect(JSON.stringify(bodiesOf(server))).not.toContain('cache_control')
    expect(bodiesOf(server)[0]).toMatchObject({ system: SYSTEM })
    // 2,100 / 2,108 / 2,116 input tokens × $3, + 45 each: 19,107 µ$ against 9,332 with the cache.
    expect(rowsOf(engine, 'agent')).toEqual([
      { step: 1, input: 2100, cached: 0, written: 0, output: 3, cost: 6345, saved: 0, extra: 0 },
      { step: 2, input: 2108, cached: 0, written: 0, output: 3, cost: 6369, saved: 0, extra: 0 },
      { step: 3, input: 2116, cached: 0, written: 0, output: 3, cost: 6393, saved: 0, extra: 0 },
    ])
  })
})

describe('pacer run --no-prompt-cache, and pacer summary', () => {
  async function cliSetup(): Promise<{ server: FakeVendor; dir: string; db: string }> {
    const server = await cachingVendor()
    cleanup.push(() => server.close())
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    // The base URL stored as the console would store it.
    const engine = createEngine({ dbPath: db, secrets: { ...secrets, get: () => null } })
    await engine.handlers['settings:set']({ baseUrls: { anthropic: server.baseUrl } })
    await engine.shutdown({ graceMs: 0 })
    return { server, dir, db }
  }
  const env = (server: FakeVendor) => ({
    ANTHROPIC_API_KEY: 'sk-ant-test-key',
    ANTHROPIC_BASE_URL: server.baseUrl,
  })

  it('a run marks the prefix unless told not to; the summary shows the cache and its saving', async () => {
    const { server, dir, db } = await cliSetup()
    const file = writeJsonl(dir, 'agent.jsonl', [agentTask])
    const off = await runPacer(['run', file, '--db', db, '--no-prompt-cache'], env(server))
    expect(off.code, off.stderr).toBe(0)
    expect(bodiesOf(server)).toHaveLength(3)
    expect(JSON.stringify(bodiesOf(server))).not.toContain('cache_control')

    const again = writeJsonl(dir, 'again.jsonl', [{ ...agentTask, type: 'agent2' }])
    const on = await runPacer(['run', again, '--db', db], env(server))
    expect(on.code, on.stderr).toBe(0)
    await until(() => bodiesOf(server).length === 6)
    expect(bodiesOf(server)[3]).toMatchObject({ system: [systemBlock] })
    expect(
      query<{ c: number; w: number }>(
        db,
        `SELECT SUM(cached_input_tokens) AS c, SUM(cache_write_tokens) AS w FROM ledger
         WHERE task_type = 'agent2'`,
      ),
    ).toEqual([{ c: 4208, w: 2116 }])

    const summary = await runPacer(['summary', '--db', db, '--json'])
    expect(summary.code, summary.stderr).toBe(0)
    const agent2 = (
      JSON.parse(summary.stdout) as { byType: Record<string, unknown>[] }
    ).byType.find((t) => t['taskType'] === 'agent2')
    expect(agent2).toMatchObject({
      cachedInputTokens: 4208,
      cacheWriteTokens: 2116,
      costMicros: 9332,
      cacheSavedMicros: 11_362,
      cacheSavedUsd: 0.011362,
      cacheWriteExtraMicros: 1587,
    })
    const table = await runPacer(['summary', '--db', db])
    // Net: 11,362 − 1,587 = 9,775 µ$.
    expect(table.stdout).toContain(
      'prompt cache: 4,208 input tokens read from it (saved $0.0114), 2,116 written to it ' +
        '($0.0016 above the input price): net $0.0098',
    )
    const csv = await runPacer(['export', '--db', db, '--kind', 'summary', '--out', '-'])
    const [header, ...lines] = csv.stdout.trim().split(/\r?\n/)
    const cols = header!.split(',')
    const agent2Line = lines.find((l) => l.startsWith('agent2,'))!.split(',')
    expect(agent2Line[cols.indexOf('cache_saved_usd')]).toBe('0.011362')
    expect(agent2Line[cols.indexOf('cache_write_extra_usd')]).toBe('0.001587')
  })
})
