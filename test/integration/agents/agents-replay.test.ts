// An agent killed between its calls and run again: what the call journal promises (issue 10): the
// tool step and the first call are replayed, not repeated.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query, runPacer, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'
import { researchAgent } from '../../helpers/agent-module'
import { eitherDialect, vendor, type FakeVendor } from '../../helpers/fake-vendor'

let server: FakeVendor
beforeEach(async () => {
  server = await vendor(eitherDialect)
})
afterEach(async () => {
  await server.close()
})

// enabled when the journal lands
describe('pacer run --agents, killed between the calls and run again', () => {
  it('replays the first call and the tool step instead of repeating them', async () => {
    const dir = tempDir('pacer-agents-')
    const agent = join(dir, 'agent.mjs')
    // After its tool step the module waits for the file `go`: the test kills it there.
    writeFileSync(agent, researchAgent({ gated: true }))
    const toolLog = join(dir, 'tool.log')
    writeFileSync(toolLog, '')
    const go = join(dir, 'go')
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'tasks.jsonl', [{ type: 'research', payload: { q: 'leases' } }])
    const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
    args.push('--base-url', `${server.url}/v1`, '--agents', agent, '--lease', '1')
    const env = { OPENAI_API_KEY: 'sk-replay', OPENAI_BASE_URL: '', TOOL_LOG: toolLog, GO: go }
    const chats = () => server.requests.filter((r) => r.url.endsWith('/chat/completions')).length
    const toolRuns = () => readFileSync(toolLog, 'utf8').split('\n').filter(Boolean).length

    const first = startPacer(args, env)
    await until(() => toolRuns() === 1)
    // Killed once the tool step is on the journal: between the tool's run and its journal write
    // the step is not done yet, and a rerun runs it again (as it must: its result was never kept).
    const stepJournaled = () =>
      query<{ n: number }>(
        db,
        'SELECT COUNT(*) AS n FROM call_journal WHERE kind = 2 AND state = 1',
      )[0]?.n === 1
    await until(stepJournaled)
    expect(chats()).toBe(1)
    first.child.kill('SIGKILL')
    await first.done

    writeFileSync(go, '')
    const again = await runPacer(args, env)
    expect(again.code).toBe(0)
    // The provider saw the first call once and the second once; the tool ran once.
    expect(chats()).toBe(2)
    expect(toolRuns()).toBe(1)
    const ledger = query<{ step: number; outcome: string }>(
      db,
      'SELECT step, outcome FROM ledger WHERE step > 0 ORDER BY id',
    )
    expect(ledger).toEqual([
      { step: 1, outcome: 'executed' },
      { step: 1, outcome: 'replayed' },
      { step: 3, outcome: 'executed' },
    ])
  })
})
