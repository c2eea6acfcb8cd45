// The console's task detail, in real Chromium over `pacer serve`: opening a row of the task table
// shows the answer the provider gave that task (a loopback server speaking OpenAI's API, run by a
// real `pacer run`), its finish reason and ledger rows, and downloads the batch's answers.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/main/engine/app/engine'
import { fakeVendor, variedUsage, type FakeVendor } from '../helpers/fake-vendor'
import { consoleSession } from '../helpers/browser'
import { query, runPacer, writeJsonl } from '../helpers/cli'

let provider: FakeVendor

const tasks = [
  { type: 'summarize', payload: { prompt: 'first report' } },
  { type: 'research', payload: { prompt: 'an agent task' }, steps: 3 },
  { type: 'summarize', payload: { prompt: 'first report' } },
  { type: 'summarize', payload: { prompt: 'please truncate this one' } },
]

const s = consoleSession({
  name: 'results',
  async prepare(db, dir) {
    provider = await fakeVendor({ latencyMs: 5, usage: variedUsage })
    const engine = createEngine({ dbPath: db })
    await engine.handlers['settings:set']({ baseUrls: { 'openai-compatible': provider.baseUrl } })
    await engine.shutdown()
    const file = writeJsonl(dir, 'batch.jsonl', tasks)
    const run = await runPacer([
      'run',
      file,
      '--db',
      db,
      '--provider',
      'openai-compatible',
      '--model',
      'm',
    ])
    if (run.code !== 0) throw new Error(run.stderr)
  },
  teardown: () => provider?.close(),
})

/** Opens the task's row and waits for its detail. */
async function openTask(taskId: number) {
  await s.page.locator(`[data-testid="task-row"][data-task-id="${taskId}"]`).click()
  const detail = s.page.getByTestId('task-detail')
  await detail.getByRole('heading', { name: new RegExp(`^Task ${taskId}\\b`) }).waitFor()
  await detail.getByTestId('task-detail-answer').waitFor()
  return detail
}

describe('the console shows a task’s answer when its row is opened', () => {
  const idOf = (line: number) =>
    query<{ id: number }>(join(s.dir, 'pacer.db'), 'SELECT id FROM tasks WHERE seq = ?', line)[0]!
      .id

  it('the agent task: its last step’s answer, finish reason and one ledger row per step', async () => {
    const detail = await openTask(idOf(2))
    const [final] = provider.finalAnswers('an agent task', 3)
    await expect(detail.getByTestId('task-detail-answer').textContent()).resolves.toBe(final!.text)
    await expect(detail.getByTestId('task-detail-finish').textContent()).resolves.toBe('stop')
    await expect(detail.getByTestId('task-detail-ledger-row').count()).resolves.toBe(3)
  })

  it('a reused duplicate: the same answer as its original, and a reused ledger row', async () => {
    const [final] = provider.finalAnswers('first report', 1)
    const original = await openTask(idOf(1))
    await expect(original.getByTestId('task-detail-answer').textContent()).resolves.toBe(
      final!.text,
    )
    const duplicate = await openTask(idOf(3))
    await expect(duplicate.getByTestId('task-detail-answer').textContent()).resolves.toBe(
      final!.text,
    )
    await expect(duplicate.getByTestId('task-detail-ledger-row').textContent()).resolves.toContain(
      'reused',
    )
  })

  it('a truncated answer is marked; the panel downloads the batch’s answers', async () => {
    const detail = await openTask(idOf(4))
    await detail.getByTestId('task-detail-truncated').waitFor()
    await expect(detail.getByTestId('task-detail-finish').textContent()).resolves.toContain(
      'length',
    )
    const [download] = await Promise.all([
      s.page.waitForEvent('download'),
      detail.getByTestId('results-export-jsonl').click(),
    ])
    const path = join(s.dir, 'downloaded.jsonl')
    await download.saveAs(path)
    const lines = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l: { line: number }) => l.line)).toEqual([1, 2, 3, 4])
    expect(lines[3]).toMatchObject({ truncated: true, finishReason: 'length' })
    await s.page.getByTestId('task-detail-close').click()
    await expect(s.page.getByTestId('task-detail').count()).resolves.toBe(0)
    expect(s.errors).toEqual([])
  })
})
