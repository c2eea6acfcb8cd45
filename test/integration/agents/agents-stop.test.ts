// Ctrl-C while an agent's handlers sit between two ctx.chat calls (issue 25, item 5): the second
// call is refused because the run is stopping, and that refusal is the runner's end, not the
// handler's failure: the tasks stay queued with their journal, and the same command finishes them,
// replaying the first calls instead of paying for them again.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query, runPacer, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'
import { gatedTwoCallAgent } from '../../helpers/agent-module'
import { eitherDialect, vendor, type FakeVendor } from '../../helpers/fake-vendor'

let server: FakeVendor
beforeEach(async () => {
  server = await vendor(eitherDialect)
})
afterEach(async () => {
  await server.close()
})

describe('pacer run --agents, Ctrl-C between two ctx.chat calls', () => {
  it('leaves the tasks queued with their journal; the same command completes them', async () => {
    const dir = tempDir('pacer-agents-stop-')
    const agent = join(dir, 'agent.mjs')
    writeFileSync(agent, gatedTwoCallAgent())
    const go = join(dir, 'go')
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'tasks.jsonl', [
      { type: 'research', payload: { q: 'leases' } },
      { type: 'research', payload: { q: 'fencing' } },
    ])
    const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
    args.push('--base-url', `${server.url}/v1`, '--agents', agent)
    const env = { OPENAI_API_KEY: 'sk-stop', OPENAI_BASE_URL: '', GO: go }
    const bodies = () =>
      server.requests
        .filter((r) => r.url.endsWith('/chat/completions'))
        .map((r) => r.body as { messages: unknown[] })
    const firstCalls = () => bodies().filter((b) => b.messages.length === 1).length
    const secondCalls = () => bodies().filter((b) => b.messages.length === 3).length
    const journaled = () =>
      query<{ n: number }>(
        db,
        'SELECT COUNT(*) AS n FROM call_journal WHERE kind = 1 AND state = 1',
      )[0]?.n ?? 0

    const first = startPacer(args, env)
    // Both handlers paid for their first call and wait for `go`.
    await until(() => journaled() === 2 && firstCalls() === 2, 60_000)
    first.child.kill('SIGINT')
    await until(() => first.output().stderr.includes('pacer: stopping'), 60_000)
    // The handlers go on while the run is stopping: their second calls are refused.
    writeFileSync(go, '')
    const stopped = await first.done
    expect(stopped.code).not.toBe(0)
    expect(secondCalls()).toBe(0)
    const tasks = () =>
      query<{ status: string; error: string | null }>(
        db,
        'SELECT status, error FROM tasks ORDER BY seq',
      )
    expect(tasks()).toEqual([
      { status: 'queued', error: null },
      { status: 'queued', error: null },
    ])
    // The paid answers are still on the journal for the next run.
    expect(journaled()).toBe(2)

    const again = await runPacer(args, env)
    expect(again.code).toBe(0)
    expect(again.stderr).toMatch(/failed 0\b/)
    expect(tasks().map((t) => t.status)).toEqual(['succeeded', 'succeeded'])
    // The provider saw each first call once (the rerun replayed it) and each second call once.
    expect(firstCalls()).toBe(2)
    expect(secondCalls()).toBe(2)
    const ledger = query<{ step: number; outcome: string; n: number }>(
      db,
      'SELECT step, outcome, COUNT(*) AS n FROM ledger WHERE step > 0 GROUP BY step, outcome ORDER BY step, outcome',
    )
    expect(ledger).toEqual([
      { step: 1, outcome: 'executed', n: 2 },
      { step: 1, outcome: 'replayed', n: 2 },
      { step: 2, outcome: 'executed', n: 2 },
    ])
  }, 180_000)
})
