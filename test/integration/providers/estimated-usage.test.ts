// Nothing free by accident: a 200 that reports no usage, or whose body cannot be read, was still
// (probably) billed. `pacer run` against loopback servers answering that way: the ledger row holds
// estimated tokens and a cost, is flagged, and the run, the summary and the export say so.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { query, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import {
  closeVendors,
  useVendor,
  vendorEnv,
  fakeVendor,
  vendorAnswer,
  vendorUsage,
  type Answer,
  type Dialect,
} from '../../helpers/fake-vendor'

afterEach(closeVendors)

const MODELS: Record<Dialect, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' }

interface Row {
  outcome: string
  status: number | null
  input_tokens: number
  output_tokens: number
  cost_micros: number | null
  estimated: number
}

async function runWith(dialect: Dialect, answer: Answer, prompts: string[]) {
  const server = await fakeVendor({ dialect, answer })
  const dir = tempDir('pacer-estimated-')
  const db = join(dir, 'pacer.db')
  await useVendor(db, server, { provider: dialect })
  const file = writeJsonl(
    dir,
    'batch.jsonl',
    prompts.map((prompt) => ({ type: 'ask', payload: { prompt } })),
  )
  const args = ['run', file, '--db', db, '--provider', dialect, '--model', MODELS[dialect]]
  const run = await runPacer(args, vendorEnv(dialect, server))
  const rows = query<Row>(
    db,
    `SELECT outcome, status, input_tokens, output_tokens, cost_micros, estimated
     FROM ledger ORDER BY id`,
  )
  return { server, dir, db, run, rows }
}

// 400 characters: about 100 tokens sent, whatever the wrapping.
const PROMPT = 'Summarize the quarterly figures in one line. '.repeat(9).slice(0, 400)

describe.each(['openai', 'anthropic'] as const)('a 200 without usage from %s', (dialect) => {
  it('is ledgered with estimated tokens and cost, flagged, and counted as estimated', async () => {
    const answer: Answer = (_r, n) =>
      n === 1
        ? { body: vendorAnswer(dialect, 'The figures rose by a tenth over the quarter.') }
        : undefined
    const { run, rows, db, dir } = await runWith(dialect, answer, [PROMPT, `${PROMPT} (second)`])
    expect(run.code, run.stderr).toBe(0)
    expect(rows).toHaveLength(2)
    const [estimated, reported] = rows
    expect(estimated).toMatchObject({ outcome: 'executed', status: 200, estimated: 1 })
    // ≈4 characters a token: the prompt's 400 characters, the answer's 45.
    expect(estimated!.input_tokens).toBeGreaterThanOrEqual(100)
    expect(estimated!.input_tokens).toBeLessThan(110)
    expect(estimated!.output_tokens).toBe(12)
    expect(estimated!.cost_micros).toBeGreaterThan(0)
    expect(reported).toMatchObject({ input_tokens: 12, output_tokens: 3, estimated: 0 })
    expect(run.stderr).toMatch(/cost <?\$[\d.]+ \(1 call estimated\)/)

    const summary = await runPacer(['summary', '--db', db])
    expect(summary.code, summary.stderr).toBe(0)
    expect(summary.stdout).toMatch(/\$[\d.]+ \(1 call estimated\)/)
    const json = await runPacer(['summary', '--db', db, '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ totals: { estimatedCalls: 1 } })

    const csv = join(dir, 'ledger.csv')
    const exported = await runPacer(['export', '--db', db, '--out', csv])
    expect(exported.code, exported.stderr).toBe(0)
    const [header, ...lines] = readFileSync(csv, 'utf8').trim().split('\r\n')
    const column = header!.split(',').indexOf('estimated')
    expect(column).toBeGreaterThan(0)
    expect(lines.map((l) => l.split(',')[column])).toEqual(['1', '0'])
  })
})

describe('a malformed 200', () => {
  it.each([
    ['an unparseable body', '{"id":"chatcmpl-1","choices":[{"message":{"content":"cut sh'],
    ['a body without choices', { id: 'chatcmpl-1', object: 'chat.completion' }],
  ])('(%s) is ledgered as an estimated paid call, and retried', async (_what, body) => {
    const answer: Answer = (_r, n) =>
      n === 1 ? { body } : { body: vendorAnswer('openai', 'fine', vendorUsage('openai', 100, 2)) }
    const { run, rows, server } = await runWith('openai', answer, [PROMPT])
    expect(run.code, run.stderr).toBe(0)
    expect(server.requests).toHaveLength(2)
    expect(rows).toHaveLength(2)
    // Input estimated from the request, output 0: nothing of the answer could be read.
    expect(rows[0]).toMatchObject({ outcome: 'error', status: 200, output_tokens: 0, estimated: 1 })
    expect(rows[0]!.input_tokens).toBeGreaterThanOrEqual(100)
    expect(rows[0]!.cost_micros).toBeGreaterThan(0)
    expect(rows[1]).toMatchObject({ outcome: 'executed', input_tokens: 100, estimated: 0 })
    expect(run.stderr).toMatch(/\(1 call estimated\)/)
  })
})

describe('a 200 whose usage cannot be believed', () => {
  it.each([
    ['negative counts', { prompt_tokens: -100, completion_tokens: -5, total_tokens: -105 }],
    ['counts as strings', { prompt_tokens: '100', completion_tokens: '5' }],
    ['a count as an object', { prompt_tokens: { n: 100 }, completion_tokens: 5 }],
    ['no completion_tokens', { prompt_tokens: 100 }],
    ['counts beyond 2^53', { prompt_tokens: 2 ** 60, completion_tokens: 5 }],
  ])('(%s) is ledgered as an estimated paid call, not as free', async (_what, usage) => {
    const answer: Answer = () => ({ body: vendorAnswer('openai', 'The figures rose.', usage) })
    const { run, rows } = await runWith('openai', answer, [PROMPT])
    expect(run.code, run.stderr).toBe(0)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ outcome: 'executed', status: 200, estimated: 1 })
    expect(rows[0]!.input_tokens).toBeGreaterThanOrEqual(100)
    expect(rows[0]!.cost_micros).toBeGreaterThan(0)
    expect(run.stderr).toMatch(/1 call estimated/)
  })
})
