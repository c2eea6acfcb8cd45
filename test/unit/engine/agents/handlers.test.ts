// The handler contract on a real SQLite file and the simulated provider: what a handler returns
// is the task's JSON answer, what it throws fails the task with its message, its ctx.chat calls
// are ledgered like the built-in loop's, and its code's identity is part of the fingerprint.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseBatchFile } from '../../../../src/main/engine/intake/batch-file'
import { loadAgentModule } from '../../../../src/main/engine/agents/module'
import type { BatchAgents } from '../../../../src/main/engine/agents/registry'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { query, tempDir } from '../../../helpers/cli'

const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

interface TaskRow {
  seq: number
  type: string
  status: string
  result: string | null
  error: string | null
  fp: string
}

/** Runs `lines` with the module `source` on a fresh database (or `dbPath`); returns its tasks. */
async function runWith(
  source: string,
  lines: unknown[],
  opts: { dbPath?: string; modulePath?: string; identity?: string } = {},
) {
  const dir = tempDir('pacer-agents-')
  const modulePath = opts.modulePath ?? join(dir, 'agent.mjs')
  writeFileSync(modulePath, source)
  const module = await loadAgentModule(modulePath)
  const agents: BatchAgents = {
    path: module.path,
    types: module.types,
    identity: opts.identity ?? module.identity,
    code: module.identity,
  }
  const dbPath = opts.dbPath ?? join(dir, 'pacer.db')
  const engine = createEngine({ dbPath, batchIds: [], sim: { latencyScale: 0.01 } })
  engines.push(engine)
  engine.agents.remember(module)
  const content = lines.map((l) => JSON.stringify(l)).join('\n') + '\n'
  const defaults = { provider: 'sim', model: 'sim-small', agents }
  const { tasks, errors } = engine.resolve(parseBatchFile(content, 'jsonl').tasks, defaults)
  expect(errors).toEqual([])
  const { batchId } = engine.batches.startFile({
    content,
    source: join(dir, 'jobs.jsonl'),
    name: 'jobs.jsonl',
    tasks,
    defaults,
    audit: false,
  })
  await engine.batches.drive(batchId).done
  const rows = query<TaskRow>(
    dbPath,
    'SELECT seq, type, status, result, error, fp FROM tasks WHERE batch_id = ? ORDER BY seq',
    batchId,
  )
  return { dbPath, batchId, rows, engine }
}

const TWO_CALLS = `
export default {
  async research(task, ctx) {
    const first = await ctx.chat({ messages: [{ role: 'user', content: 'plan ' + task.payload.q }] })
    const found = await ctx.step('search', () => ({ hits: [task.payload.q.length] }))
    ctx.log('found ' + found.hits.length)
    const second = await ctx.chat({
      messages: [{ role: 'user', content: 'answer ' + task.payload.q }],
      model: 'sim-large',
      params: { max_tokens: 20 },
    })
    return { q: task.payload.q, line: task.line, found, words: [first.text, second.text].map((t) => t.split(' ').length), usage: second.usage, finish: second.finishReason }
  },
}
`

describe('agent handlers', () => {
  it("a handler's JSON result is the task's answer; each ctx.chat is a ledger row on its model", async () => {
    const { dbPath, batchId, rows } = await runWith(TWO_CALLS, [
      { type: 'research', payload: { q: 'leases' } },
    ])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ status: 'succeeded', error: null })
    const body = JSON.parse(rows[0]!.result!) as { value: Record<string, unknown>; text: string }
    expect(body.value).toMatchObject({ q: 'leases', line: 1, found: { hits: [6] }, finish: 'stop' })
    expect(JSON.parse(body.text)).toEqual(body.value)
    expect((body.value.usage as { outputTokens: number }).outputTokens).toBeGreaterThan(0)
    // Call indexes count the step too: chat 1, step 2, chat 3.
    const ledger = query<{ step: number; model: string; outcome: string }>(
      dbPath,
      'SELECT step, model, outcome FROM ledger WHERE batch_id = ? ORDER BY id',
      batchId,
    )
    expect(ledger).toEqual([
      { step: 1, model: 'sim-small', outcome: 'executed' },
      { step: 3, model: 'sim-large', outcome: 'executed' },
    ])
  })

  it('an exception fails the task with its message; the claim is released for the next run', async () => {
    const { rows, dbPath } = await runWith(
      `export default { a: async (task, ctx) => {
        await ctx.chat({ messages: [{ role: 'user', content: 'hi' }] })
        throw new Error('the tool said no')
      } }`,
      [{ type: 'a', payload: 1 }],
    )
    expect(rows[0]).toMatchObject({ status: 'failed', error: 'the tool said no', result: null })
    expect(query(dbPath, "SELECT * FROM claims WHERE state = 'completed'")).toHaveLength(0)
  })

  it('a result that is not JSON fails the task, saying where', async () => {
    const { rows } = await runWith(
      `export default {
        none: async () => undefined,
        nan: async () => ({ score: NaN }),
        fn: async () => ({ cb: () => 1 }),
        step: async (task, ctx) => ctx.step('clock', () => new Date()),
      }`,
      [
        { type: 'none', payload: 1 },
        { type: 'nan', payload: 1 },
        { type: 'fn', payload: 1 },
        { type: 'step', payload: 1 },
      ],
    )
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      ['failed', 'the result of handler "none" is not JSON: value is undefined, which is not JSON'],
      ['failed', 'the result of handler "nan" is not JSON: value.score is NaN, which is not JSON'],
      [
        'failed',
        expect.stringMatching(/^the result of handler "fn" is not JSON: value\.cb is a function/),
      ],
      ['failed', expect.stringMatching(/^ctx\.step\("clock"\) is not JSON: value is a Date/)],
    ])
  })

  it('a bad ctx.chat request fails the task naming the field', async () => {
    const { rows } = await runWith(
      `export default {
        a: async (task, ctx) => ctx.chat({ messages: [] }),
        b: async (task, ctx) => ctx.chat({ messages: [{ role: 'robot', content: 'x' }] }),
        c: async (task, ctx) => ctx.chat({ messages: [{ role: 'user', content: 'x' }], params: { temperature: 'hot' } }),
        d: async (task, ctx) => ctx.chat({ messages: [{ role: 'user', content: 'x' }], provider: 'nowhere' }),
      }`,
      ['a', 'b', 'c', 'd'].map((type) => ({ type, payload: 1 })),
    )
    expect(rows.map((r) => r.error)).toEqual([
      'ctx.chat: messages must be a non-empty array of {role, content}',
      'ctx.chat: messages[0] must be {role: system|developer|user|assistant|tool, content}',
      expect.stringMatching(/^ctx\.chat: params\.temperature: /),
      'unknown provider "nowhere"',
    ])
    expect(rows.every((r) => r.status === 'failed')).toBe(true)
  })

  it('tasks of types the module does not handle run the built-in loop', async () => {
    const { rows, dbPath, batchId, engine } = await runWith(
      `export default { a: async () => 'from agent' }`,
      [
        { type: 'a', payload: 1 },
        { type: 'other', payload: { prompt: 'hi' }, steps: 2 },
      ],
    )
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded'])
    expect(JSON.parse(rows[0]!.result!)).toMatchObject({ value: 'from agent' })
    expect(JSON.parse(rows[1]!.result!)).toMatchObject({ steps: 2 })
    expect(query(dbPath, 'SELECT * FROM ledger WHERE batch_id = ?', batchId)).toHaveLength(2)
    expect(engine.agents.unhandled(batchId)).toEqual([{ type: 'other', tasks: 1 }])
  })

  it("the module's identity is part of the fingerprint of the tasks it handles, not of the others", async () => {
    const lines = [
      { type: 'a', payload: 1 },
      { type: 'other', payload: 1 },
      { type: 'a', payload: 2, key: 'k-1' },
    ]
    const first = await runWith(`export default { a: async () => 1 }`, lines)
    const changed = await runWith(`export default { a: async () => 2 }`, lines, {
      dbPath: first.dbPath,
    })
    expect(changed.rows[0]!.fp).not.toBe(first.rows[0]!.fp)
    expect(changed.rows[0]!.status).toBe('succeeded')
    expect(JSON.parse(changed.rows[0]!.result!)).toMatchObject({ value: 2 })
    // The built-in loop's task, and a task with its own key, keep their identity.
    expect(changed.rows.slice(1).map((r) => [r.fp, r.status])).toEqual(
      first.rows.slice(1).map((r) => [r.fp, 'reused']),
    )
    // A pinned identity (--agent-version) reuses across code changes.
    const pinned = await runWith(`export default { a: async () => 3 }`, lines, {
      dbPath: first.dbPath,
      identity: 'version:pinned',
    })
    const again = await runWith(`export default { a: async () => 4 }`, lines, {
      dbPath: first.dbPath,
      identity: 'version:pinned',
    })
    expect(again.rows[0]).toMatchObject({ fp: pinned.rows[0]!.fp, status: 'reused' })
    expect(JSON.parse(again.rows[0]!.result!)).toMatchObject({ value: 3 })
  })

  it('a batch whose module changed since it was queued is refused by a process that loads it anew', async () => {
    const dir = tempDir('pacer-agents-')
    const modulePath = join(dir, 'agent.mjs')
    writeFileSync(modulePath, `export default { a: async () => 1 }`)
    const module = await loadAgentModule(modulePath)
    const dbPath = join(dir, 'pacer.db')
    const agents = {
      path: module.path,
      types: module.types,
      identity: module.identity,
      code: module.identity,
    }
    // Queued by one engine (a console), which does not run it...
    const queuing = createEngine({ dbPath, batchIds: [], sim: { latencyScale: 0.01 } })
    engines.push(queuing)
    const content = '{"type":"a","payload":1}\n'
    const defaults = { provider: 'sim', model: 'sim-small', agents }
    const { tasks } = queuing.resolve(parseBatchFile(content, 'jsonl').tasks, defaults)
    const withAgents = queuing.batches.enqueue(
      tasks,
      { name: 'x', source: null, sourceHash: null, audit: false },
      agents,
    )
    await queuing.shutdown()
    // ...then the module changes, and another process (which never loaded it) runs the batch.
    writeFileSync(modulePath, `export default { a: async () => 2 }`)
    const running = createEngine({ dbPath, batchIds: [withAgents], sim: { latencyScale: 0.01 } })
    engines.push(running)
    await running.batches.drive(withAgents).done
    const [row] = query<TaskRow>(
      dbPath,
      'SELECT status, error FROM tasks WHERE batch_id = ?',
      withAgents,
    )
    expect(row!.status).toBe('failed')
    expect(row!.error).toBe(
      `agent module ${module.path} changed since batch ${withAgents} was queued (${module.identity}, now ${(await loadAgentModule(modulePath)).identity}): queue the file again to run the new code`,
    )
  })
})
