// A stop while handlers sit between two ctx.chat calls (issue 25, item 5), on a real SQLite file
// and the simulated provider: the refused second call is the runner's end, whatever the handler
// makes of it (lets it go up, wraps it in an error of its own, or catches it and returns), so the
// task stays queued with its journal and no answer is stored.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseBatchFile } from '../../../../src/main/engine/intake/batch-file'
import { loadAgentModule } from '../../../../src/main/engine/agents/module'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { query, tempDir, until } from '../../../helpers/cli'

interface Gate {
  between: number
  go: Promise<void>
}
const gate = globalThis as unknown as { __pacerStopGate?: Gate }

const engines: Engine[] = []
afterEach(async () => {
  delete gate.__pacerStopGate
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

/** A handler that makes one call, waits for the test's gate, then makes another and does `then`. */
function handler(onRefusal: string): string {
  return `export default {
  async research(task, ctx) {
    await ctx.chat({ messages: [{ role: 'user', content: 'plan ' + task.payload.q }] })
    const g = globalThis.__pacerStopGate
    g.between++
    await g.go
    try {
      await ctx.chat({ messages: [{ role: 'user', content: 'answer ' + task.payload.q }] })
    } catch (err) {
      ${onRefusal}
    }
    return { q: task.payload.q }
  },
}`
}

describe('agent handlers stopped between two calls', () => {
  it.each([
    ['lets the refusal go up', 'throw err'],
    ['wraps it in an error of its own', "throw new Error('tool failed: ' + err.message)"],
    ['catches it and returns', 'return { q: task.payload.q, fallback: true }'],
  ])('a handler that %s leaves its task queued, journal kept', async (_what, onRefusal) => {
    let go!: () => void
    const g: Gate = { between: 0, go: new Promise<void>((r) => (go = r)) }
    gate.__pacerStopGate = g
    const dir = tempDir('pacer-agents-stop-')
    const modulePath = join(dir, 'agent.mjs')
    writeFileSync(modulePath, handler(onRefusal))
    const module = await loadAgentModule(modulePath)
    const agents = {
      path: module.path,
      types: module.types,
      identity: module.identity,
      code: module.identity,
    }
    const dbPath = join(dir, 'pacer.db')
    const engine = createEngine({ dbPath, batchIds: [], sim: { latencyScale: 0.01 } })
    engines.push(engine)
    engine.agents.remember(module)
    const lines = [
      { type: 'research', payload: { q: 'leases' } },
      { type: 'research', payload: { q: 'fencing' } },
    ]
    const content = lines.map((l) => JSON.stringify(l)).join('\n') + '\n'
    const defaults = { provider: 'sim', model: 'sim-small', agents }
    const { tasks } = engine.resolve(parseBatchFile(content, 'jsonl').tasks, defaults)
    const { batchId } = engine.batches.startFile({
      content,
      source: join(dir, 'jobs.jsonl'),
      name: 'jobs.jsonl',
      tasks,
      defaults,
      audit: false,
    })
    const run = engine.batches.drive(batchId)
    await until(() => g.between === 2)
    run.stop()
    go()
    const end = await run.done
    expect(end.interrupted).toBe(true)

    const rows = query<{ status: string; error: string | null; result: string | null }>(
      dbPath,
      'SELECT status, error, result FROM tasks WHERE batch_id = ? ORDER BY seq',
      batchId,
    )
    expect(rows).toEqual([
      { status: 'queued', error: null, result: null },
      { status: 'queued', error: null, result: null },
    ])
    expect(query(dbPath, "SELECT * FROM claims WHERE state = 'completed'")).toHaveLength(0)
    const journaled = query<{ idx: number; state: number }>(
      dbPath,
      'SELECT idx, state FROM call_journal ORDER BY fp_id, idx',
    )
    expect(journaled).toEqual([
      { idx: 1, state: 1 },
      { idx: 1, state: 1 },
    ])
  })
})
