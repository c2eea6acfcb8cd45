// `pacer results` as a user runs it, after `pacer run` against a loopback server speaking OpenAI's
// chat completions API: every task's answer is, task by task, what the server answered its last
// step, with the tokens and cost of its execution (or 0 and what it saved, for a reuse). A
// truncated answer (finish_reason "length") is marked and its duplicate executed again.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import type { TaskAnswerView } from '../../../src/shared/contract'
import { runPacer, shuffle, tempDir, writeJsonl } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor, variedUsage } from '../../helpers/fake-vendor'

afterEach(closeVendors)

// USD per 1M tokens = micro-dollars per token: a call costs 3·in + 15·out micro-dollars.
const PRICE = { input: 3, cachedInput: 3, cacheWrite: 3, output: 15 }

async function setUp() {
  const server = await fakeVendor({ latencyMs: 5, usage: variedUsage })
  const dir = tempDir('pacer-results-')
  const db = join(dir, 'pacer.db')
  await useVendor(db, server, { prices: { m: PRICE } })
  return { server, dir, db }
}

const RUN = ['--provider', 'openai-compatible', '--model', 'm']

interface Task {
  type: string
  payload: { prompt: string }
  steps?: number
  key?: string
}

/** A JSONL record: the contract's view, money in USD. */
type Answer = Omit<TaskAnswerView, 'costMicros' | 'savedMicros'> & {
  costUsd: number | null
  savedUsd: number | null
}

/** 120 distinct tasks (every fifth a 3-step agent, every seventh with a key) and 80 duplicates. */
function batchOf200(): Task[] {
  const distinct: Task[] = Array.from({ length: 120 }, (_, i) => ({
    type: i % 2 ? 'summarize' : 'research',
    payload: { prompt: `task ${i}: write about item ${i * 7}` },
    ...(i % 5 === 0 ? { steps: 3 } : {}),
    ...(i % 7 === 0 ? { key: `key-${i}` } : {}),
  }))
  const duplicates = Array.from({ length: 80 }, (_, j) => ({ ...distinct[(j * 13) % 120]! }))
  return shuffle([...distinct, ...duplicates], 7)
}

const costOf = (calls: { usage: { input: number; output: number } }[]) =>
  calls.reduce((sum, c) => sum + c.usage.input * PRICE.input + c.usage.output * PRICE.output, 0)

describe('pacer results', () => {
  it('equals, task by task, what the server answered: 200 tasks with duplicates and agents', async () => {
    const { server, dir, db } = await setUp()
    const tasks = batchOf200()
    const file = writeJsonl(dir, 'batch.jsonl', tasks)
    const run = await runPacer(['run', file, '--db', db, ...RUN, '--json'])
    expect(run.code, run.stderr).toBe(0)
    const summary = JSON.parse(run.stdout) as RunSummary
    expect(summary).toMatchObject({ tasks: 200, distinct: 120, executed: 120, reused: 80 })
    expect(summary.truncated).toBe(0)

    const out = join(dir, 'answers.jsonl')
    const results = await runPacer(['results', '--db', db, '--out', out])
    expect(results.code, results.stderr).toBe(0)
    expect(results.stderr).toContain(`wrote 200 answer(s) of batch ${summary.batchId}`)
    const answers = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Answer)
    // Input order: the file's lines, one record each.
    expect(answers.map((a) => a.line)).toEqual(tasks.map((_, i) => i + 1))

    const executedPer = new Map<string, number>()
    for (const a of answers) {
      const task = tasks[a.line - 1]!
      const steps = task.steps ?? 1
      const [final, ...more] = server.finalAnswers(task.payload.prompt, steps)
      expect(more).toEqual([])
      expect(a).toMatchObject({
        batchId: summary.batchId,
        type: task.type,
        key: task.key ?? null,
        text: final!.text,
        message: final!.message,
        finishReason: 'stop',
        truncated: false,
        steps,
        error: null,
      })
      const calls = server.requestsOf(task.payload.prompt)
      expect(calls).toHaveLength(steps)
      const cost = costOf(calls) / 1e6
      if (a.origin === 'executed') {
        expect(a.status).toBe('succeeded')
        expect(a.inputTokens).toBe(calls.reduce((s, c) => s + c.usage.input, 0))
        expect(a.outputTokens).toBe(calls.reduce((s, c) => s + c.usage.output, 0))
        expect(a.costUsd).toBeCloseTo(cost, 9)
        expect(a.savedUsd).toBeNull()
      } else {
        expect(a).toMatchObject({ origin: 'reused', status: 'reused', inputTokens: 0 })
        expect(a.costUsd).toBe(0)
        expect(a.savedUsd).toBeCloseTo(cost, 9)
      }
      if (a.origin === 'executed') {
        executedPer.set(task.payload.prompt, (executedPer.get(task.payload.prompt) ?? 0) + 1)
      }
    }
    // Each distinct task was paid for by exactly one of its copies.
    expect(executedPer.size).toBe(120)
    expect([...executedPer.values()].every((n) => n === 1)).toBe(true)

    // The CSV says the same, answer for answer, with the raw message as a JSON column.
    const csvPath = join(dir, 'answers.csv')
    const csv = await runPacer([
      'results',
      '--db',
      db,
      '--format',
      'csv',
      '--raw',
      '--out',
      csvPath,
    ])
    expect(csv.code, csv.stderr).toBe(0)
    const rows = parse(readFileSync(csvPath, 'utf8'), { columns: true }) as Record<string, string>[]
    expect(rows).toHaveLength(200)
    rows.forEach((row, i) => {
      const a = answers[i]!
      expect(row).toMatchObject({
        batch_id: a.batchId,
        line: String(a.line),
        task_id: String(a.taskId),
        status: a.status,
        origin: a.origin,
        truncated: 'false',
        finish_reason: 'stop',
        answer: a.text,
        input_tokens: String(a.inputTokens),
        cost_usd: (a.costUsd ?? 0).toFixed(6),
      })
      expect(JSON.parse(row['message']!)).toEqual(a.message)
    })
  })

  it('marks a truncated answer and executes its duplicate again; --accept-truncated reuses it', async () => {
    const { server, dir, db } = await setUp()
    const cut = { type: 'summarize', payload: { prompt: 'please truncate this report' } }
    const whole = { type: 'summarize', payload: { prompt: 'a short note' } }
    const file = writeJsonl(dir, 'batch.jsonl', [cut, whole, cut, whole])
    // Serially: the duplicate meets the completed truncated claim, not a running one.
    const run = await runPacer(['run', file, '--db', db, ...RUN, '--max-concurrency', '1'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain('truncated 2')
    expect(run.stderr).toContain('hit the output cap')
    expect(server.requestsOf(cut.payload.prompt)).toHaveLength(2)
    expect(server.requestsOf(whole.payload.prompt)).toHaveLength(1)

    const results = await runPacer(['results', '--db', db])
    expect(results.code, results.stderr).toBe(0)
    const answers = results.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Answer)
    expect(answers.map((a) => [a.line, a.origin, a.truncated, a.finishReason])).toEqual([
      [1, 'executed', true, 'length'],
      [2, 'executed', false, 'stop'],
      [3, 'executed', true, 'length'],
      [4, 'reused', false, 'stop'],
    ])
    const sent = server.requestsOf(cut.payload.prompt).map((r) => r.text)
    expect([answers[0]!.text, answers[2]!.text]).toEqual(sent)

    // The operator accepts truncated answers: a new run of the same tasks reuses the last one.
    const again = await runPacer([
      'run',
      file,
      '--db',
      db,
      ...RUN,
      '--new',
      '--accept-truncated',
      '--json',
    ])
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ executed: 0, reused: 4, truncated: 2 })
    expect(server.requestsOf(cut.payload.prompt)).toHaveLength(2)
  })
})
