// `pacer run FILE --agents MODULE` as real processes: a user's module with two ctx.chat calls
// around a ctx.step tool call, against a loopback server that speaks OpenAI's API and counts its
// requests, and a tool that counts its own runs (a line appended to a file per run).
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { researchAgent } from '../../helpers/agent-module'
import { eitherDialect, vendor, type FakeVendor } from '../../helpers/fake-vendor'

const KEY = 'sk-agents-test-key'
const CLEAN = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: '', ANTHROPIC_API_KEY: '' }

const TASKS = [
  { type: 'research', payload: { q: 'leases' } },
  { type: 'research', payload: { q: 'fencing' } },
  { type: 'research', payload: { q: 'leases' } },
]

let server: FakeVendor
beforeEach(async () => {
  server = await vendor(eitherDialect)
})
afterEach(async () => {
  await server.close()
})

function setup() {
  const dir = tempDir('pacer-agents-')
  const agent = join(dir, 'agent.mjs')
  writeFileSync(agent, researchAgent())
  const toolLog = join(dir, 'tool.log')
  writeFileSync(toolLog, '')
  const db = join(dir, 'pacer.db')
  const file = writeJsonl(dir, 'tasks.jsonl', TASKS)
  const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
  args.push('--base-url', `${server.url}/v1`, '--agents', agent)
  const run = (...extra: string[]) => runPacer([...args, ...extra], { ...CLEAN, TOOL_LOG: toolLog })
  const toolRuns = () => readFileSync(toolLog, 'utf8').split('\n').filter(Boolean).length
  const chats = () => server.requests.filter((r) => r.url.endsWith('/chat/completions')).length
  return { dir, agent, db, run, toolRuns, chats }
}

describe('pacer run --agents', () => {
  it('runs each distinct task once through the module: two calls and one tool run each', async () => {
    const { db, run, toolRuns, chats } = setup()
    const r = await run('--json')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const summary = JSON.parse(r.stdout) as { tasks: number; reused: number; failed: number }
    expect(summary).toMatchObject({ tasks: 3, reused: 1, failed: 0 })
    expect(chats()).toBe(4)
    expect(toolRuns()).toBe(2)
    // The second call carries the first call's answer and the tool's result.
    const bodies = server.requests.map((r) => r.body as { messages: { content: string }[] })
    const seconds = bodies.filter((b) => b.messages.length === 3)
    expect(seconds).toHaveLength(2)
    expect(seconds[0]!.messages.map((m) => m.content)).toEqual([
      expect.stringMatching(/^plan: /),
      'ok',
      expect.stringMatching(/^answer from \[\d+\]$/),
    ])
    const ledger = query<{ step: number; outcome: string }>(
      db,
      "SELECT step, outcome FROM ledger WHERE outcome = 'executed' ORDER BY id",
    )
    expect(ledger.map((l) => l.step).sort()).toEqual([1, 1, 3, 3])
    const results = query<{ result: string }>(db, 'SELECT result FROM tasks ORDER BY seq')
    expect(JSON.parse(results[0]!.result).value).toEqual({
      q: 'leases',
      plan: 'ok',
      answer: 'ok',
      hits: [6],
    })
  })

  it('the same module again reuses every answer; a changed module runs the tasks again', async () => {
    const { agent, run, toolRuns, chats } = setup()
    expect((await run()).code).toBe(0)
    expect([chats(), toolRuns()]).toEqual([4, 2])

    const same = await run('--json')
    expect(same.code).toBe(0)
    expect(JSON.parse(same.stdout)).toMatchObject({ tasks: 3, reused: 3, executed: 0 })
    expect([chats(), toolRuns()]).toEqual([4, 2])

    // One comment more: another content, so other code as far as Pacer can tell.
    appendFileSync(agent, '// tuned the prompts\n')
    const changed = await run('--json')
    expect(changed.code).toBe(0)
    expect(JSON.parse(changed.stdout)).toMatchObject({ tasks: 3, reused: 1 })
    expect([chats(), toolRuns()]).toEqual([8, 4])

    // --agent-version pins the identity: later code changes reuse what it ran.
    expect((await run('--agent-version', 'r1')).code).toBe(0)
    expect([chats(), toolRuns()]).toEqual([12, 6])
    appendFileSync(agent, '// a comment that changes no answer\n')
    const pinned = await run('--agent-version', 'r1', '--json')
    expect(JSON.parse(pinned.stdout)).toMatchObject({ tasks: 3, reused: 3 })
    expect([chats(), toolRuns()]).toEqual([12, 6])
  })

  it('runs a TypeScript module, and its imports, through the pacer command', async () => {
    const dir = tempDir('pacer-agents-')
    writeFileSync(
      join(dir, 'words.ts'),
      'export const count = (s: string): number => s.split(" ").length\n',
    )
    writeFileSync(
      join(dir, 'agent.ts'),
      `import { count } from './words'
type Ctx = { chat(r: { messages: { role: string; content: string }[] }): Promise<{ text: string }> }
export default {
  async greet(task: { payload: { name: string } }, ctx: Ctx) {
    const a = await ctx.chat({ messages: [{ role: 'user', content: 'hi ' + task.payload.name }] })
    return { name: task.payload.name, words: count(a.text) }
  },
}
`,
    )
    const file = writeJsonl(dir, 'greet.jsonl', [{ type: 'greet', payload: { name: 'ada' } }])
    const db = join(dir, 'pacer.db')
    const r = await runPacer(['run', file, '--db', db, '--agents', join(dir, 'agent.ts')])
    expect(r.code).toBe(0)
    const [row] = query<{ result: string }>(db, 'SELECT result FROM tasks')
    expect(JSON.parse(row!.result).value).toEqual({ name: 'ada', words: expect.any(Number) })
  })

  it('a bad module is one line naming it, exit 2, and nothing is queued', async () => {
    const { agent, db, run, chats } = setup()
    writeFileSync(agent, 'export const research = async () => 1\n')
    const r = await run()
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      `pacer: agent module ${agent}: no default export: export default { taskType: async (task, ctx) => result }\n`,
    )
    expect(chats()).toBe(0)
    expect(existsSync(db)).toBe(false)
  })

  it('says once which task types of the file the module leaves to the built-in loop', async () => {
    const { dir, agent, db } = setup()
    const file = writeJsonl(dir, 'mixed.jsonl', [
      ...TASKS,
      { type: 'summarize', payload: { prompt: 'a' } },
      { type: 'summarize', payload: { prompt: 'b' } },
    ])
    const r = await runPacer(
      ['run', file, '--db', db, '--agents', agent, '--sim-latency-scale', '0.01'],
      { TOOL_LOG: join(dir, 'tool.log') },
    )
    expect(r.code).toBe(0)
    expect(r.stderr.split('\n').filter((l) => l.includes('built-in loop'))).toEqual([
      `pacer: ${agent} handles no task of type "summarize" (2): they run the built-in loop`,
    ])
  })
})
