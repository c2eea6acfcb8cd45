// The task detail's journal, in real Chromium over `pacer serve`: a 3-step task whose second
// call's answer could not be written the first time is run again; its drawer lists each call with
// its index and model, the first one replayed (saved, not paid), the second paid again as a
// duplicate whose answer was lost, and the task's log says so.

import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/main/engine/app/engine'
import { consoleSession } from '../helpers/browser'
import { query, until } from '../helpers/cli'

let taskId: number

/** Runs the task as a new batch in an engine on the file, until it is done. */
async function runOnce(db: string): Promise<string> {
  const engine = createEngine({ dbPath: db, sim: { latencyScale: 0 } })
  try {
    const { batchId } = await engine.handlers['tasks:enqueue']({
      tasks: [{ type: 'research', payload: { prompt: 'journal in the console' }, steps: 3 }],
    })
    engine.start()
    await until(() => {
      const c = engine.queue.counts(batchId)
      return c.queued + c.running === 0
    })
    return batchId
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

const s = consoleSession({
  name: 'journal',
  async prepare(db) {
    // The first run cannot write the answer of call 2 (as on a failing disk): its intent stays.
    const setup = createEngine({ dbPath: db })
    setup.db.exec(`CREATE TRIGGER lose_call_2 BEFORE INSERT ON ledger_rows
      WHEN NEW.step = 2 AND NEW.outcome = 1 BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
    await setup.shutdown()
    await runOnce(db)
    const fix = createEngine({ dbPath: db })
    fix.db.exec('DROP TRIGGER lose_call_2')
    await fix.shutdown()
    const batchId = await runOnce(db)
    taskId = query<{ id: number }>(db, 'SELECT id FROM tasks WHERE batch_id = ?', batchId)[0]!.id
  },
})

describe('the task detail shows the task’s journal', () => {
  it('each call with its index and model, replayed or live, and the log line of the lost answer', async () => {
    await s.page.locator(`[data-testid="task-row"][data-task-id="${taskId}"]`).click()
    const detail = s.page.getByTestId('task-detail')
    await detail.getByTestId('task-detail-answer').waitFor()
    const rows = detail.getByTestId('task-detail-ledger-row')
    await expect(
      rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-outcome'))),
    ).resolves.toEqual(['replayed', 'executed', 'duplicate', 'executed'])
    const texts = await rows.allTextContents()
    expect(texts[0]).toContain('sim-small')
    expect(texts[0]).toMatch(/replayed.*saved \$/)
    // Call 2 sent again, and beside it the payment whose answer was lost.
    expect(texts[1]).toContain('sim-small')
    expect(texts[2]).toContain('(answer lost)')
    expect(texts[3]).toContain('sim-small')
    const log = detail.getByTestId('task-detail-log-line')
    await expect(log.count()).resolves.toBe(1)
    await expect(log.first().getAttribute('data-kind')).resolves.toBe('lost')
    await expect(log.first().textContent()).resolves.toContain('call 2')
    expect(s.errors).toEqual([])
  })
})
