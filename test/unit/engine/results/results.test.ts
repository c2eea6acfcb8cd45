// The answers out (results.ts) on a real SQLite file and a real engine with a scripted provider:
// input order across pages, a batch still queued, results stored before finish reasons were kept,
// CSV safety of answer text, and the console's task detail with its ledger rows.
import { PassThrough } from 'node:stream'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { RESULTS_PAGE_ROWS } from '../../../../src/main/engine/results/results-sql'
import type { Provider, ProviderResponse } from '../../../../src/main/engine/core/types'
import type { TaskAnswerView } from '../../../../src/shared/contract'
import { tempDir, until } from '../../../helpers/cli'

const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown({ graceMs: 0 })))
})

/** Answers each prompt with a text naming it; `=sum` prompts get a formula-looking answer. */
const scripted: Provider = {
  id: 'scripted',
  call: async (request): Promise<ProviderResponse> => {
    const prompt = String(request.messages[0]!.content)
    return {
      status: 200,
      headers: {},
      text: prompt.startsWith('=') ? `=HYPERLINK("x")\nline two, with a comma` : `re: ${prompt}`,
      usage: { inputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2 },
      finishReason: 'stop',
    }
  },
}

function open(): Engine {
  const engine = createEngine({
    dbPath: join(tempDir('pacer-results-unit-'), 'pacer.db'),
    providers: { scripted },
    scheduler: { initial: 8, max: 12 },
  })
  engines.push(engine)
  return engine
}

async function enqueue(engine: Engine, prompts: string[]): Promise<string> {
  const { batchId } = await engine.handlers['tasks:enqueue']({
    tasks: prompts.map((p) => ({
      type: 'job',
      payload: { prompt: p },
      provider: 'scripted',
      model: 'm',
    })),
  })
  return batchId
}

async function runAll(engine: Engine, batchId: string): Promise<void> {
  engine.start()
  await until(() => engine.queue.progress(batchId)?.state === 'done', 30_000)
}

async function exported(engine: Engine, options: Parameters<Engine['exportResults']>[1]) {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => (text += c.toString('utf8')))
  const { rows } = await engine.exportResults(out, options)
  return { rows, text }
}

const lines = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as TaskAnswerView & { costUsd: number | null })

describe('results', () => {
  it('every task once, in input order, across pages; duplicates show their original', async () => {
    const engine = open()
    const n = RESULTS_PAGE_ROWS * 2 + 3
    const prompts = Array.from({ length: n }, (_, i) => `p${i % (n - 10)}`)
    const batchId = await enqueue(engine, prompts)
    await runAll(engine, batchId)
    const { rows, text } = await exported(engine, {})
    expect(rows).toBe(n)
    const answers = lines(text)
    expect(answers.map((a) => a.line)).toEqual(prompts.map((_, i) => i + 1))
    expect(answers.every((a, i) => a.text === `re: ${prompts[i]}`)).toBe(true)
    expect(answers.filter((a) => a.origin === 'reused')).toHaveLength(10)
    expect(answers.filter((a) => a.origin === 'reused').every((a) => a.costUsd === 0)).toBe(true)
  })

  it('a batch not run yet: one record per task, no answer, no origin', async () => {
    const engine = open()
    const batchId = await enqueue(engine, ['a', 'b'])
    const answers = lines((await exported(engine, { batchId })).text)
    expect(answers.map((a) => [a.status, a.origin, a.text, a.finishReason])).toEqual([
      ['queued', null, null, null],
      ['queued', null, null, null],
    ])
  })

  it('reads results stored before they carried a finish reason or cost', async () => {
    const engine = open()
    const batchId = await enqueue(engine, ['old'])
    await runAll(engine, batchId)
    engine.db.exec(
      `UPDATE results SET body = '{"text":"old answer","steps":1,"usage":{"inputTokens":5,"outputTokens":1}}'`,
    )
    engine.db.exec('UPDATE fingerprints SET cost_micros = 42')
    const [a] = lines((await exported(engine, { batchId })).text)
    expect(a).toMatchObject({
      text: 'old answer',
      finishReason: null,
      truncated: false,
      message: null,
      inputTokens: 5,
      origin: 'executed',
      costUsd: 0.000042,
    })
  })

  it('CSV: an answer that looks like a formula is neutralized, its newline and comma quoted', async () => {
    const engine = open()
    const batchId = await enqueue(engine, ['=sum', 'plain'])
    await runAll(engine, batchId)
    const { text } = await exported(engine, { batchId, format: 'csv' })
    expect(text).toContain(`"'=HYPERLINK(""x"")\nline two, with a comma"`)
    const rows = parse(text, { columns: true }) as Record<string, string>[]
    expect(rows.map((r) => r['answer'])).toEqual([
      `'=HYPERLINK("x")\nline two, with a comma`,
      're: plain',
    ])
    expect(Object.keys(rows[0]!)).not.toContain('message')
  })

  it('an unknown batch or task is an error naming it', async () => {
    const engine = open()
    await expect(exported(engine, { batchId: 'nope' })).rejects.toMatchObject({
      code: 'unknown_batch',
      field: 'batchId',
    })
    expect(() => engine.handlers['tasks:get']({ taskId: 99 })).toThrow('no task 99')
  })

  it('tasks:get: the answer and the task\u2019s own ledger rows', async () => {
    const engine = open()
    const batchId = await enqueue(engine, ['x', 'x'])
    await runAll(engine, batchId)
    const ids = engine.queue.listTasks({ batchId, offset: 0, limit: 10 }).rows.map((r) => r.id)
    const first = await engine.handlers['tasks:get']({ taskId: ids[0]! })
    const second = await engine.handlers['tasks:get']({ taskId: ids[1]! })
    const outcomes = [first, second].map((d) => d.ledger.map((r) => r.outcome)).sort()
    expect(outcomes).toEqual([['executed'], ['reused']])
    expect(first.answer.text).toBe('re: x')
    expect(second.answer.text).toBe('re: x')
    expect(first.answer.finishReason).toBe('stop')
  })
})
