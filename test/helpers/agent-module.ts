// The user's agent module of the agent integration tests: two ctx.chat calls around a ctx.step
// tool call that counts its runs (a line appended to $TOOL_LOG per run). `gated`: after the tool
// step, wait for the file $GO, so a test can kill the process between the calls.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { query, startPacer, tempDir, until, writeJsonl } from './cli'

/**
 * One `research` task of the gated agent on openai at `baseUrl` (a fake vendor), started and
 * killed (SIGKILL) once its tool step is on the journal — between the tool's run and its journal
 * write the step is not done yet. `beforeKill` looks at that moment. The file $GO is written
 * after, so the same `args` and `env` run it again to the end.
 */
export async function killedAfterToolStep(
  baseUrl: string,
  beforeKill: () => void = () => undefined,
): Promise<{
  dir: string
  db: string
  args: string[]
  env: NodeJS.ProcessEnv
  toolRuns: () => number
}> {
  const dir = tempDir('pacer-agents-')
  const agent = join(dir, 'agent.mjs')
  writeFileSync(agent, researchAgent({ gated: true }))
  const toolLog = join(dir, 'tool.log')
  writeFileSync(toolLog, '')
  const go = join(dir, 'go')
  const db = join(dir, 'pacer.db')
  const file = writeJsonl(dir, 'tasks.jsonl', [{ type: 'research', payload: { q: 'leases' } }])
  const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
  args.push('--base-url', baseUrl, '--agents', agent, '--lease', '1')
  const env = { OPENAI_API_KEY: 'sk-replay', OPENAI_BASE_URL: '', TOOL_LOG: toolLog, GO: go }
  const toolRuns = () => readFileSync(toolLog, 'utf8').split('\n').filter(Boolean).length
  const first = startPacer(args, env)
  await until(() => toolRuns() === 1, 30_000)
  const stepJournaled = () =>
    query<{ n: number }>(
      db,
      'SELECT COUNT(*) AS n FROM call_journal WHERE kind = 2 AND state = 1',
    )[0]?.n === 1
  await until(stepJournaled, 30_000)
  beforeKill()
  first.child.kill('SIGKILL')
  await first.done
  writeFileSync(go, '')
  return { dir, db, args, env, toolRuns }
}

export function researchAgent({ gated = false } = {}): string {
  return `import { appendFileSync, existsSync } from 'node:fs'
export default {
  async research(task, ctx) {
    const plan = await ctx.chat({ messages: [{ role: 'user', content: 'plan: ' + task.payload.q }] })
    const hits = await ctx.step('search', () => {
      appendFileSync(process.env.TOOL_LOG, task.payload.q + '\\n')
      return [task.payload.q.length]
    })
    ${gated ? 'while (!existsSync(process.env.GO)) await new Promise((r) => setTimeout(r, 20))' : ''}
    const answer = await ctx.chat({
      messages: [
        { role: 'user', content: 'plan: ' + task.payload.q },
        { role: 'assistant', content: plan.text },
        { role: 'user', content: 'answer from ' + JSON.stringify(hits) },
      ],
    })
    return { q: task.payload.q, plan: plan.text, answer: answer.text, hits }
  },
}
`
}

/**
 * Two ctx.chat calls with a wait between them for the file $GO, so a test can stop the run
 * (Ctrl-C) while every task sits between its calls, then let the handlers go on.
 */
export function gatedTwoCallAgent(): string {
  return `import { existsSync } from 'node:fs'
export default {
  async research(task, ctx) {
    const plan = await ctx.chat({ messages: [{ role: 'user', content: 'plan: ' + task.payload.q }] })
    while (!existsSync(process.env.GO)) await new Promise((r) => setTimeout(r, 20))
    const answer = await ctx.chat({
      messages: [
        { role: 'user', content: 'plan: ' + task.payload.q },
        { role: 'assistant', content: plan.text },
        { role: 'user', content: 'now answer' },
      ],
    })
    return { q: task.payload.q, plan: plan.text, answer: answer.text }
  },
}
`
}
