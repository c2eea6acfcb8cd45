// A ctx.chat the handler does not await (issue 25, smaller item): the call is still the task's.
// The task ends only when every call it started has its answer; each is on the ledger once, as
// the task's own executed call (no duplicate, no waste), and the task's cost counts it. A call
// started once the handler and its calls are done is refused (never sent) and said in the task log.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { eitherDialect, vendor, type FakeVendor } from '../../helpers/fake-vendor'

let server: FakeVendor
beforeEach(async () => {
  // The side call is answered well after the main one: the handler has returned by then.
  server = await vendor((req, res, raw) => {
    const side = JSON.stringify(req.body).includes('side ')
    setTimeout(() => void eitherDialect(req, res, raw), side ? 800 : 0)
  })
})
afterEach(async () => {
  await server.close()
})

const AGENT = `export default {
  async fire(task, ctx) {
    // Not awaited: a side call the handler forgot (or meant to fire and forget).
    ctx.chat({ messages: [{ role: 'user', content: 'side ' + task.payload.q }] })
    const a = await ctx.chat({ messages: [{ role: 'user', content: 'main ' + task.payload.q }] })
    return a.text
  },
  async late(task, ctx) {
    const a = await ctx.chat({ messages: [{ role: 'user', content: 'main late' }] })
    // Started once this task is over (the other tasks' slow side calls keep the run going):
    // refused, and its rejection, handled by nobody, does not crash the run.
    setTimeout(() => void ctx.chat({ messages: [{ role: 'user', content: 'late' }] }), 50)
    return a.text
  },
}
`

describe('pacer run --agents, a ctx.chat not awaited', () => {
  it('is the task’s own call: one executed row each, no duplicate, no waste', async () => {
    const dir = tempDir('pacer-agents-unawaited-')
    const agent = join(dir, 'agent.mjs')
    writeFileSync(agent, AGENT)
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'tasks.jsonl', [
      { type: 'late', payload: { q: 'c' } },
      { type: 'fire', payload: { q: 'a' } },
      { type: 'fire', payload: { q: 'b' } },
    ])
    const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
    args.push('--base-url', `${server.url}/v1`, '--agents', agent)
    const r = await runPacer(args, { OPENAI_API_KEY: 'sk-unawaited', OPENAI_BASE_URL: '' })
    expect(r.stderr).not.toMatch(/Error|not open/)
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/executed 3, reused 0, failed 0/)
    expect(r.stderr).toMatch(/wasted by duplicates \$0\.0000\b/)
    const prompts = server.requests
      .filter((q) => q.url.endsWith('/chat/completions'))
      .map((q) => JSON.stringify(q.body))
    expect(prompts).toHaveLength(5)
    expect(prompts.filter((p) => p.includes('"late"'))).toEqual([])
    // Every call paid is the task's own, once: executed under the task's claim.
    const ledger = query<{ seq: number; outcome: string; n: number }>(
      db,
      `SELECT t.seq, l.outcome, COUNT(*) AS n FROM ledger l JOIN tasks t ON t.id = l.task_id
       WHERE l.step > 0 GROUP BY t.seq, l.outcome ORDER BY t.seq, l.outcome`,
    )
    expect(ledger).toEqual([
      { seq: 1, outcome: 'executed', n: 1 },
      { seq: 2, outcome: 'executed', n: 2 },
      { seq: 3, outcome: 'executed', n: 2 },
    ])
    // The task's stored cost counts its un-awaited call: 2 calls of 10 + 2 tokens each.
    const usage = query<{ body: string }>(
      db,
      `SELECT r.body FROM task_queue t JOIN results r ON r.id = t.result_id WHERE t.seq = 2`,
    )
    expect(JSON.parse(usage[0]!.body).usage).toMatchObject({ inputTokens: 20, outputTokens: 4 })
    const refused = query<{ message: string }>(
      db,
      `SELECT message FROM task_log WHERE message LIKE '%not sent%'`,
    )
    expect(refused.map((l) => l.message)).toEqual([
      expect.stringMatching(/^ctx\.chat after the handler of task \d+ \(line 1\) had returned/),
    ])
  }, 120_000)
})
