// The task drawer shows what a task was asked, in real Chromium over `pacer serve`: a task with
// request params (its payload, params, the messages sent, its model; a credential in the payload
// redacted), and a task an agent module ran (its module and version, and the calls it made), each
// block with a copy button that puts it on the clipboard; at 1280x800 the drawer leaves the
// table's identifying columns in view.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { query, runPacer, writeJsonl } from '../helpers/cli'

const PLANTED_KEY = 'sk-planted0123456789abcdefXYZ'
let paramsTask: number
let agentTask: number

const s = consoleSession({
  name: 'task-input',
  async prepare(db, dir) {
    writeFileSync(
      join(dir, 'agent.mjs'),
      `export const version = '2.3.1'
export default {
  async research(task, ctx) {
    const plan = await ctx.chat({ messages: [{ role: 'user', content: 'plan: ' + task.payload.q }] })
    const answer = await ctx.chat({ messages: [{ role: 'user', content: 'answer: ' + plan.text }] })
    return { q: task.payload.q, answer: answer.text }
  },
}
`,
    )
    const file = writeJsonl(dir, 'input.jsonl', [
      {
        type: 'summarize',
        payload: { prompt: 'Summarize the drawer', system: 'Be brief', api_key: PLANTED_KEY },
        params: { max_tokens: 64, temperature: 0.2 },
      },
      { type: 'research', payload: { q: 'what does the drawer show' } },
    ])
    const r = await runPacer(['run', file, '--db', db, '--agents', join(dir, 'agent.mjs')])
    if (r.code !== 0) throw new Error(`pacer run failed: ${r.stderr}`)
    const ids = query<{ id: number; type: string }>(db, 'SELECT id, type FROM tasks ORDER BY id')
    paramsTask = ids.find((t) => t.type === 'summarize')!.id
    agentTask = ids.find((t) => t.type === 'research')!.id
  },
})

async function open(taskId: number) {
  await s.page.locator(`[data-testid="task-row"][data-task-id="${taskId}"]`).click()
  const detail = s.page.getByTestId('task-detail')
  await detail.locator('h2', { hasText: `Task ${taskId}` }).waitFor()
  await detail.getByTestId('task-detail-input').waitFor()
  return detail
}

describe('the task drawer shows the input', () => {
  it('of a task with params: payload, params, messages and model, a key redacted, copyable', async () => {
    await s.page.setViewportSize({ width: 1280, height: 800 })
    await s.page.context().grantPermissions(['clipboard-read', 'clipboard-write'])
    const detail = await open(paramsTask)
    await expect(detail.getByTestId('task-detail-model').textContent()).resolves.toBe(
      'sim · sim-small',
    )
    const payload = await detail.getByTestId('task-detail-payload').textContent()
    expect(payload).toContain('"prompt": "Summarize the drawer"')
    expect(payload).toContain('"api_key": "[redacted]"')
    const params = await detail.getByTestId('task-detail-params').textContent()
    expect(params).toContain('"max_tokens": 64')
    expect(params).toContain('"temperature": 0.2')
    const messages = detail.getByTestId('task-detail-messages').locator('li')
    await expect(messages.evaluateAll((els) => els.map((e) => e.dataset.role))).resolves.toEqual([
      'system',
      'user',
    ])
    await expect(messages.nth(1).textContent()).resolves.toContain('Summarize the drawer')
    await expect(detail.getByTestId('task-detail-agent').textContent()).resolves.toBe(
      'the built-in loop',
    )
    await detail.getByTestId('task-detail-answer').waitFor()
    // The planted key is nowhere on the page.
    expect(await s.page.content()).not.toContain(PLANTED_KEY)

    await detail.getByTestId('task-detail-params-copy').click()
    // The clipboard write is async: the button says so once it resolved (seen idle on CI).
    await expect
      .poll(() => detail.getByTestId('task-detail-params-copy').getAttribute('data-state'), {
        timeout: 10_000,
      })
      .toBe('copied')
    const copied = await s.page.evaluate<string>('navigator.clipboard.readText()')
    expect(JSON.parse(copied)).toEqual({ max_tokens: 64, temperature: 0.2 })

    // At 1280x800 the table beside the drawer still shows each row's id, type and status.
    const row = s.page.locator(`[data-testid="task-row"][data-task-id="${paramsTask}"]`)
    const drawer = await detail.boundingBox()
    for (const col of ['id', 'type', 'status']) {
      const cell = await row.locator(`.col-${col}`).boundingBox()
      expect(cell, col).not.toBeNull()
      expect(cell!.width, col).toBeGreaterThan(20)
      expect(cell!.x + cell!.width, col).toBeLessThanOrEqual(drawer!.x)
    }
    await expect(row.locator('.col-status').textContent()).resolves.toMatch(/succeeded/i)
    expect(s.errors).toEqual([])
  })

  it('of an agent-module task: its module and version, and the calls it made', async () => {
    const detail = await open(agentTask)
    const agent = await detail.getByTestId('task-detail-agent').textContent()
    expect(agent).toContain('agent.mjs')
    expect(agent).toContain('version:2.3.1')
    const payload = await detail.getByTestId('task-detail-payload').textContent()
    expect(payload).toContain('"q": "what does the drawer show"')
    await detail.getByTestId('task-detail-agent-messages').waitFor()
    await expect(detail.getByTestId('task-detail-messages').count()).resolves.toBe(0)
    // Both ctx.chat calls are on the ledger, by call index.
    const rows = detail.getByTestId('task-detail-ledger-row')
    await expect(rows.count()).resolves.toBe(2)
    await expect(detail.getByTestId('task-detail-answer').textContent()).resolves.toContain(
      'what does the drawer show',
    )
    expect(s.errors).toEqual([])
  })
})
