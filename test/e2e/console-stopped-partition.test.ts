// A setup failure seen from the console, in real Chromium over `pacer serve`: the partition shows
// as stopped with its reason, the batch is paused with it, and Resume (once the cause is fixed)
// runs the batch to its end. The provider is a loopback server answering as OpenAI does.

import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/main/engine/app/engine'
import { consoleSession } from '../helpers/browser'
import { query, until } from '../helpers/cli'
import { fakeVendor, type FakeVendor } from '../helpers/fake-vendor'

let vendor: FakeVendor

const s = consoleSession({
  name: 'stop',
  async prepare(db) {
    // It wants a key the console was never given: every call would be a 401.
    vendor = await fakeVendor({ failures: { key: 'sk-test-k', models: ['m'], trouble: 'none' } })
    const engine = createEngine({ dbPath: db })
    await engine.handlers['settings:set']({ baseUrls: { 'openai-compatible': vendor.baseUrl } })
    await engine.shutdown()
  },
  teardown: () => vendor?.close(),
})

describe('a partition stopped by a setup failure, in the console', () => {
  it('shows the reason on the partition and the batch; Resume runs the batch to its end', async () => {
    const tasks = Array.from({ length: 20 }, (_, i) => ({
      type: 'q',
      payload: { i },
      provider: 'openai-compatible',
      model: 'm',
    }))
    const { batchId } = await s.served.api<{ batchId: string }>('tasks:enqueue', { tasks })
    await s.page.getByTestId('nav-queue').click()
    const reason = s.page.getByTestId('batch-stop-reason')
    await reason.waitFor({ timeout: 20_000 })
    await expect(reason.textContent()).resolves.toMatch(
      /openai-compatible:m stopped: HTTP 401: You didn't provide an API key/,
    )
    expect(vendor.requests.length).toBeLessThanOrEqual(3)
    expect(query(s.db, 'SELECT state FROM batches')).toEqual([{ state: 'paused' }])

    await s.page.getByTestId('nav-concurrency').click()
    const banner = s.page.getByTestId('partition-stopped')
    await banner.waitFor({ timeout: 20_000 })
    await expect(banner.textContent()).resolves.toMatch(/HTTP 401.*its tasks stay queued/)

    // The operator fixes the cause (here: the server stops asking for a key) and resumes.
    vendor.failures.key = ''
    await s.page.getByTestId('resume-partition').click()
    await until(() => {
      const [b] = query<{ state: string }>(s.db, 'SELECT state FROM batches WHERE id = ?', batchId)
      return b?.state === 'done'
    }, 30_000)
    expect(query(s.db, 'SELECT status, COUNT(*) AS n FROM tasks GROUP BY status')).toEqual([
      { status: 'succeeded', n: 20 },
    ])
    await banner.waitFor({ state: 'detached', timeout: 20_000 })
    expect(s.errors).toEqual([])
  })

  it('the call timeout set in Settings is the engine’s deadline', async () => {
    await s.page.getByTestId('nav-settings').click()
    const field = s.page.getByTestId('call-timeout')
    await expect(field.inputValue()).resolves.toBe('120')
    await field.fill('45')
    await s.page.getByTestId('save-call-timeout').click()
    await until(async () => {
      const view = await s.served.api<{ callTimeoutSeconds: number }>('settings:get')
      return view.callTimeoutSeconds === 45
    })
    expect(query(s.db, "SELECT value FROM settings WHERE key = 'callTimeoutSeconds'")).toEqual([
      { value: '45' },
    ])
    expect(s.errors).toEqual([])
  })
})
