// The console's import with an agent module (batches:preview / batches:import), on a real SQLite
// file and the simulated provider, through the engine's handlers as both transports bind them.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseCommand } from '../../../../src/shared/contract'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { query, tempDir, until } from '../../../helpers/cli'

const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

const CONTENT = [
  { type: 'research', payload: { q: 'a' } },
  { type: 'research', payload: { q: 'b' } },
  { type: 'other', payload: { prompt: 'c' } },
]
  .map((l) => JSON.stringify(l))
  .join('\n')

function setup() {
  const dir = tempDir('pacer-agents-')
  const agent = join(dir, 'agent.mjs')
  writeFileSync(
    agent,
    `export default { research: async (task, ctx) => {
      const a = await ctx.chat({ messages: [{ role: 'user', content: task.payload.q }] })
      return { q: task.payload.q, words: a.text.split(' ').length }
    } }`,
  )
  // A console's engine: it runs every running batch.
  const engine = createEngine({ dbPath: join(dir, 'pacer.db'), sim: { latencyScale: 0.01 } })
  engines.push(engine)
  engine.start()
  return { dir, agent, engine, dbPath: join(dir, 'pacer.db') }
}

describe('console import with an agent module', () => {
  it('previews which types the module handles and which run the built-in loop', async () => {
    const { agent, engine } = setup()
    const preview = await engine.handlers['batches:preview']({
      fileName: 'r.jsonl',
      content: CONTENT,
      agents: agent,
    })
    expect(preview.valid).toBe(3)
    expect(preview.agents).toEqual({
      path: agent,
      identity: expect.stringMatching(/^sha256:/),
      types: ['research'],
      unhandled: [{ type: 'other', tasks: 1 }],
    })
    const plain = await engine.handlers['batches:preview']({
      fileName: 'r.jsonl',
      content: CONTENT,
    })
    expect(plain.agents).toBeUndefined()
  })

  it('imports a batch whose tasks its handlers run; the module is stored with the batch', async () => {
    const { agent, engine, dbPath } = setup()
    const out = await engine.handlers['batches:import']({
      fileName: 'r.jsonl',
      content: CONTENT,
      agents: agent,
    })
    expect(out).toMatchObject({ enqueued: 3, errors: [] })
    const batchId = out.batchId!
    await until(() => engine.queue.batch(batchId)?.state === 'done')
    const rows = query<{ type: string; status: string; result: string }>(
      dbPath,
      'SELECT type, status, result FROM tasks WHERE batch_id = ? ORDER BY seq',
      batchId,
    )
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
    expect(JSON.parse(rows[0]!.result)).toMatchObject({ value: { q: 'a' } })
    expect(JSON.parse(rows[2]!.result)).not.toHaveProperty('value')
    const stored = query<{ agents: string }>(
      dbPath,
      'SELECT agents FROM batches WHERE id = ?',
      batchId,
    )
    expect(JSON.parse(stored[0]!.agents)).toMatchObject({ path: agent, types: ['research'] })
  })

  it('a module that does not load is the command error, naming the agents field', async () => {
    const { dir, engine } = setup()
    const missing = join(dir, 'missing.mjs')
    const err = await Promise.resolve(
      engine.handlers['batches:import']({ fileName: 'r.jsonl', content: CONTENT, agents: missing }),
    ).catch((e: unknown) => e)
    expect(err).toMatchObject({
      code: 'agent_module',
      field: 'agents',
      message: `agents: agent module ${missing}: no such file`,
    })
    expect(engine.queue.listBatches()).toEqual([])
  })

  it('a relative path is refused before the engine sees it', () => {
    const reply = parseCommand('batches:preview', {
      fileName: 'r.jsonl',
      content: CONTENT,
      agents: 'agent.mjs',
    })
    expect(reply).toEqual({
      ok: false,
      error: {
        code: 'invalid_input',
        field: 'agents',
        message: "agents: give the module's absolute path",
      },
    })
  })
})
