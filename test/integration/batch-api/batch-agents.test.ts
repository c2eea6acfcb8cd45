// An agent module (two ctx.chat calls around a ctx.step) through --batch-api, unchanged: each
// task's first call goes in one provider batch, its second in the next, and a rerun after a kill
// between the rounds replays the first call from the journal instead of submitting it again.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { query, runPacer, startPacer } from '../../helpers/cli'
import { researchAgent } from '../../helpers/agent-module'
import { until } from '../../helpers/until'
import {
  harness,
  ledgerCost,
  LIST_PRICES,
  results,
  type Dialect,
  type Harness,
} from './batch-helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const TASKS = 6

interface AgentRun {
  file: string
  args: (dialect: Dialect) => string[]
  env: (dialect: Dialect) => NodeJS.ProcessEnv
  toolRuns: () => number
  go: () => void
}

function agentRun(h: Harness, gated: boolean): AgentRun {
  const agent = join(h.dir, 'agent.mjs')
  writeFileSync(agent, researchAgent({ gated: true }))
  const toolLog = join(h.dir, 'tool.log')
  writeFileSync(toolLog, '')
  const goFile = join(h.dir, 'go')
  if (!gated) writeFileSync(goFile, '')
  const file = h.file(
    'agents.jsonl',
    Array.from({ length: TASKS }, (_, i) => ({ type: 'research', payload: { q: `topic ${i}` } })),
  )
  return {
    file,
    args: (d) => h.args(d, file, ['--agents', agent, '--lease', '3']),
    env: (d) => ({ ...h.env(d), TOOL_LOG: toolLog, GO: goFile }),
    toolRuns: () => readFileSync(toolLog, 'utf8').split('\n').filter(Boolean).length,
    go: () => writeFileSync(goFile, ''),
  }
}

/** The provider batches the double received, each as its custom_ids. */
function remoteBatches(h: Harness, dialect: Dialect): number[] {
  if (dialect === 'openai') {
    return [...h.vendor.openai.batches.values()].map((b) => b.total)
  }
  return [...h.vendor.anthropic.batches.values()].map((b) => b.timeline.lines.length)
}

describe.each(['openai', 'anthropic'] as Dialect[])('an agent module via %s batches', (dialect) => {
  it('runs in two rounds: every first ctx.chat in one provider batch, every second in the next', async () => {
    h = await harness({ errorShare: 0 })
    const a = agentRun(h, false)
    h.tick()
    const r = await runPacer(a.args(dialect), a.env(dialect))
    expect(r.code, r.stderr).toBe(0)
    // Two rounds, each one provider batch holding every task's call of that round.
    expect(remoteBatches(h, dialect)).toEqual([TASKS, TASKS])
    expect(h.submitted(dialect)).toHaveLength(2 * TASKS)
    expect(new Set(h.submitted(dialect)).size).toBe(2 * TASKS)
    expect(a.toolRuns()).toBe(TASKS)
    const records = await results(h.db)
    expect(records.every((x) => x.status === 'succeeded')).toBe(true)
    // The answer is the second call's: the module saw the first call's answer in between.
    const answers = new Set(h.vendor.answers().values())
    for (const x of records) {
      const out = JSON.parse(x.text!) as { plan: string; answer: string; hits: number[] }
      expect(answers.has(out.plan)).toBe(true)
      expect(answers.has(out.answer)).toBe(true)
    }
    expect(ledgerCost(h.db)).toMatchObject({
      batchRows: 2 * TASKS,
      totalMicros: h.vendor.billMicros(LIST_PRICES),
    })
  }, 300_000)

  it('killed between the rounds, the rerun replays the first call and submits only the second', async () => {
    h = await harness({ errorShare: 0 })
    const a = agentRun(h, true)
    h.tick()
    const first = startPacer(a.args(dialect), a.env(dialect))
    // Every task past its first call and its tool step, held by the gate before its second call.
    await until(() => a.toolRuns() === TASKS, 120_000)
    const stepsJournaled = () =>
      query<{ n: number }>(
        h!.db,
        'SELECT COUNT(*) AS n FROM call_journal WHERE kind = 2 AND state = 1',
      )[0]!.n === TASKS
    await until(stepsJournaled, 60_000)
    first.child.kill('SIGKILL')
    await first.done
    expect(h.submitted(dialect)).toHaveLength(TASKS)
    const firstRound = [...h.submitted(dialect)]

    a.go()
    const again = await runPacer(a.args(dialect), a.env(dialect))
    expect(again.code, again.stderr).toBe(0)
    // The first round is not sent again: only each task's second call, in one new batch.
    expect(remoteBatches(h, dialect)).toEqual([TASKS, TASKS])
    const secondRound = h.submitted(dialect).slice(TASKS)
    expect(secondRound).toHaveLength(TASKS)
    for (const id of secondRound) expect(firstRound).not.toContain(id)
    // The tool step ran once per task, and the first call came from the journal.
    expect(a.toolRuns()).toBe(TASKS)
    const replayed = query<{ n: number }>(
      h.db,
      "SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'replayed' AND step = 1",
    )[0]!.n
    expect(replayed).toBe(TASKS)
    const records = await results(h.db)
    expect(records.every((x) => x.status === 'succeeded')).toBe(true)
    // Paid once per call the vendor answered: nothing twice.
    expect(ledgerCost(h.db).totalMicros).toBe(h.vendor.billMicros(LIST_PRICES))
  }, 300_000)
})
