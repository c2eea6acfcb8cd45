// Request params and messages as `pacer run` sends them, against loopback servers speaking
// OpenAI's and Anthropic's APIs: what each server receives is what the line and the run said (the
// line winning), content parts and every role arrive as structured messages, and params are part
// of a task's identity.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { query, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import {
  closeVendors,
  useVendor,
  vendorEnv,
  fakeVendor,
  type Dialect,
  type Recorded,
  type FakeVendor,
} from '../../helpers/fake-vendor'

afterEach(closeVendors)

async function setup(dialect: Dialect) {
  const server = await fakeVendor({ dialect: dialect })
  const dir = tempDir('pacer-params-')
  const db = join(dir, 'pacer.db')
  await useVendor(db, server, { provider: dialect })
  return { server, dir, db }
}

/** The one request whose messages mention `marker`. */
function sentFor(server: FakeVendor, marker: string): Recorded {
  const found = server.requests.filter((r) => JSON.stringify(r.body['messages']).includes(marker))
  expect(found, marker).toHaveLength(1)
  return found[0]!
}

/** A request's body without what every request carries: the params it was given. */
function paramsOf(r: Recorded): Record<string, unknown> {
  const { model: _model, messages: _messages, stream: _stream, system: _system, ...rest } = r.body
  return rest
}

const TOOL_TURNS = [
  { role: 'developer', content: 'be brief' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'what is in the picture? parts-marker' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ],
  },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"zoom":2}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'a cat on a mat' },
]

describe('request params against an OpenAI-speaking server', () => {
  it('sends the line params over the run params, max_completion_tokens where OpenAI requires it', async () => {
    const { server, dir, db } = await setup('openai')
    const file = writeJsonl(dir, 'batch.jsonl', [
      {
        type: 't',
        payload: { prompt: 'line-a' },
        params: { temperature: 0.2, stop: ['\n\n'], seed: 7 },
      },
      { type: 't', payload: { prompt: 'line-b' } },
      {
        type: 't',
        payload: { prompt: 'line-c' },
        model: 'gpt-4o-mini',
        params: { max_tokens: 10, response_format: { type: 'json_object' } },
      },
      { type: 't', payload: { messages: TOOL_TURNS } },
    ])
    const run = await runPacer(
      [
        ...['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-5-mini', '--json'],
        ...['--max-tokens', '50', '--temperature', '0.9', '--params', '{"top_p":0.5}'],
      ],
      vendorEnv('openai', server),
    )
    expect(run.code, run.stderr).toBe(0)
    expect(server.requests).toHaveLength(4)
    expect(paramsOf(sentFor(server, 'line-a'))).toEqual({
      max_completion_tokens: 50,
      temperature: 0.2,
      top_p: 0.5,
      stop: ['\n\n'],
      seed: 7,
    })
    expect(paramsOf(sentFor(server, 'line-b'))).toEqual({
      max_completion_tokens: 50,
      temperature: 0.9,
      top_p: 0.5,
    })
    // gpt-4o-mini on a server that is not api.openai.com: the classic max_tokens.
    const c = sentFor(server, 'line-c')
    expect(c.body['model']).toBe('gpt-4o-mini')
    expect(paramsOf(c)).toEqual({
      max_tokens: 10,
      temperature: 0.9,
      top_p: 0.5,
      response_format: { type: 'json_object' },
    })
    // Content parts, the developer role, tool calls and the tool result: exactly as given.
    expect(sentFor(server, 'parts-marker').body['messages']).toEqual(TOOL_TURNS)
    // Stored with the fingerprint, canonical.
    const stored = query<{ params: string }>(db, 'SELECT params FROM tasks ORDER BY seq')
    expect(stored.map((r) => JSON.parse(r.params) as unknown)[0]).toEqual({
      max_tokens: 50,
      seed: 7,
      stop: ['\n\n'],
      temperature: 0.2,
      top_p: 0.5,
    })
  })

  it('makes params part of the task: other params run again, the same ones reordered do not', async () => {
    const { server, dir, db } = await setup('openai')
    const file = writeJsonl(dir, 'batch.jsonl', [
      { type: 't', payload: { prompt: 'same-prompt' }, params: { temperature: 0.1, seed: 1 } },
      { type: 't', payload: { prompt: 'same-prompt' }, params: { seed: 1, temperature: 0.1 } },
      { type: 't', payload: { prompt: 'same-prompt' }, params: { temperature: 0.3 } },
      { type: 't', payload: { prompt: 'same-prompt' } },
    ])
    const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
    const run = await runPacer([...args, '--json'], vendorEnv('openai', server))
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ tasks: 4, distinct: 3, executed: 3, reused: 1 })
    // Sent in parallel: in any order.
    expect(server.requests.map((r) => paramsOf(r))).toHaveLength(3)
    expect(server.requests.map((r) => paramsOf(r))).toEqual(
      expect.arrayContaining([{ temperature: 0.1, seed: 1 }, { temperature: 0.3 }, {}]),
    )
    const fps = query<{ n: number }>(db, 'SELECT COUNT(DISTINCT fp) AS n FROM tasks')
    expect(fps[0]!.n).toBe(3)

    // The same file with another run-wide param is other tasks for the lines that set none.
    const again = await runPacer(
      [...args, '--temperature', '0.5', '--json'],
      vendorEnv('openai', server),
    )
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ executed: 1, reused: 3 })
    expect(paramsOf(server.requests[3]!)).toEqual({ temperature: 0.5 })
  })

  it('refuses bad params naming the line and field, and a bad flag naming the flag', async () => {
    const { server, dir, db } = await setup('openai')
    const file = writeJsonl(dir, 'batch.jsonl', [
      { type: 't', payload: { prompt: 'x' }, params: { temperature: 3 } },
      { type: 't', payload: { prompt: 'y' }, params: { max_tokens: 1.5, bogus: 1 } },
    ])
    const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
    const bad = await runPacer(args, vendorEnv('openai', server))
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/batch\.jsonl:1: params\.temperature: .*2/)
    expect(bad.stderr).toMatch(/batch\.jsonl:2: params\.max_tokens: must be an integer/)
    expect(bad.stderr).toMatch(/batch\.jsonl:2: params: unknown key: "bogus"/)
    const flag = await runPacer([...args, '--params', '{"seed":"x"}'], vendorEnv('openai', server))
    expect(flag.code).toBe(2)
    expect(flag.stderr).toMatch(/--params: seed: /)
    expect(server.requests).toHaveLength(0)
  })
})

describe('request params against an Anthropic-speaking server', () => {
  it('sends max_tokens 1024 unless given, the params in its own fields, every role mapped', async () => {
    const { server, dir, db } = await setup('anthropic')
    const file = writeJsonl(dir, 'batch.jsonl', [
      { type: 't', payload: { prompt: 'plain-line' } },
      {
        type: 't',
        payload: { prompt: 'param-line' },
        params: { max_tokens: 64, temperature: 0.5, top_p: 0.8, stop: 'END' },
      },
      { type: 't', payload: { messages: [{ role: 'system', content: 'sys' }, ...TOOL_TURNS] } },
    ])
    const args = ['run', file, '--db', db, '--provider', 'anthropic']
    const run = await runPacer(
      [...args, '--model', 'claude-haiku-4-5', '--json'],
      vendorEnv('anthropic', server),
    )
    expect(run.code, run.stderr).toBe(0)
    expect(paramsOf(sentFor(server, 'plain-line'))).toEqual({ max_tokens: 1024 })
    expect(paramsOf(sentFor(server, 'param-line'))).toEqual({
      max_tokens: 64,
      temperature: 0.5,
      top_p: 0.8,
      stop_sequences: ['END'],
    })
    const tools = sentFor(server, 'parts-marker').body
    // One system block, marked for the prompt cache (on by default).
    expect(tools['system']).toEqual([
      { type: 'text', text: 'sys\n\nbe brief', cache_control: { type: 'ephemeral' } },
    ])
    expect(tools['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is in the picture? parts-marker' },
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
          },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_1', name: 'look', input: { zoom: 2 } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'a cat on a mat' }],
      },
    ])

    // Run-wide params reach the lines that set none.
    const second = writeJsonl(dir, 'second.jsonl', [{ type: 't', payload: { prompt: 'run-wide' } }])
    const wide = await runPacer(
      ['run', second, '--db', db, '--provider', 'anthropic', '--model', 'claude-haiku-4-5'].concat([
        '--max-tokens',
        '200',
        '--temperature',
        '0.1',
      ]),
      vendorEnv('anthropic', server),
    )
    expect(wide.code, wide.stderr).toBe(0)
    expect(paramsOf(sentFor(server, 'run-wide'))).toEqual({ max_tokens: 200, temperature: 0.1 })
  })

  it('refuses response_format and seed, which the Messages API has no field for, sending nothing', async () => {
    const { server, dir, db } = await setup('anthropic')
    const file = writeJsonl(dir, 'batch.jsonl', [
      { type: 't', payload: { prompt: 'x' }, params: { response_format: { type: 'json_object' } } },
    ])
    const run = await runPacer(
      ['run', file, '--db', db, '--provider', 'anthropic', '--model', 'claude-haiku-4-5'],
      vendorEnv('anthropic', server),
    )
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(
      /batch\.jsonl:1: params\.response_format: response_format is not supported by Anthropic's Messages API/,
    )
    const seeded = await runPacer(
      ['run', file, '--db', db, '--provider', 'anthropic', '--model', 'claude-haiku-4-5'].concat([
        '--params',
        '{"seed":3}',
      ]),
      vendorEnv('anthropic', server),
    )
    expect(seeded.code).toBe(2)
    expect(seeded.stderr).toMatch(/response_format and seed are not supported/)
    expect(server.requests).toHaveLength(0)
  })
})

describe('request params on the simulated provider', () => {
  it('caps the answers at max_tokens, the line over the run', async () => {
    const dir = tempDir('pacer-params-')
    const db = join(dir, 'pacer.db')
    const long = 'Explain the ledger in detail. '.repeat(40)
    const file = writeJsonl(dir, 'batch.jsonl', [
      { type: 'run-wide', payload: { prompt: long } },
      { type: 'own', payload: { prompt: long }, params: { max_tokens: 5 } },
      { type: 'agent', steps: 3, payload: { prompt: long } },
    ])
    const run = await runPacer([
      ...['run', file, '--db', db, '--sim-latency-scale', '0.05'],
      ...['--max-tokens', '20', '--json'],
    ])
    expect(run.code, run.stderr).toBe(0)
    const rows = query<{ task_type: string; output_tokens: number }>(
      db,
      "SELECT task_type, output_tokens FROM ledger WHERE outcome = 'executed' ORDER BY id",
    )
    const byType = (t: string) => rows.filter((r) => r.task_type === t).map((r) => r.output_tokens)
    // Uncapped, the sim answers about as long as the prompt (~300 tokens).
    expect(byType('run-wide')).toEqual([20])
    expect(byType('own')).toEqual([5])
    expect(byType('agent')).toEqual([20, 20, 20])
  })
})
