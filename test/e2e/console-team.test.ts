// Team mode in the console: `pacer serve --store` on a real redis-server, real Chromium on the
// built console. Settings shows this process's store with its password masked and refuses a URL
// with a password; a partition another machine drives shows up from the store, and its card says
// when admission waits for a team store that is gone.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  closeConsole,
  ensureConsoleBuilt,
  launchChromium,
  openConsolePage,
  serveConsole,
  type ServedConsole,
} from '../helpers/browser'
import { ROOT, startPacer, tempDir, writeJsonl } from '../helpers/cli'
import { startRedis, type RedisServer } from '../helpers/redis'

const SHOTS = join(ROOT, 'test-results', 'screenshots')
const PASSWORD = 'e2e-team-pw-5151'

let server: ServedConsole['proc']
let browser: Browser
let page: Page
let redis: RedisServer
let dir: string
const pageErrors: string[] = []

beforeAll(async () => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  dir = tempDir('pacer-e2e-team-')
  redis = await startRedis({ password: PASSWORD })
  const env = { PACER_REDIS_PASSWORD: PASSWORD }
  const served = await serveConsole(join(dir, 'pacer.db'), ['--store', redis.url], env)
  server = served.proc
  browser = await launchChromium()
  page = await openConsolePage(browser, served.url, pageErrors)
}, 120_000)

afterAll(async () => {
  await closeConsole(browser, server)
  await redis.close()
})

describe('the console in team mode', () => {
  it('Settings shows the store masked, stores a URL without a password and refuses one with it', async () => {
    await page.getByTestId('nav-settings').click()
    const active = page.getByTestId('team-store-active')
    await expect
      .poll(() => active.textContent())
      .toContain(`redis://:***@127.0.0.1:${redis.port}/0`)
    const input = page.getByTestId('team-store-url')
    await input.fill(`redis://:${PASSWORD}@10.0.0.5:6379/0`)
    await page.getByTestId('save-team-store').click()
    await expect
      .poll(() => page.locator('.settings-section', { has: input }).textContent())
      .toContain('PACER_REDIS_PASSWORD')
    // The refusal was the server's 400 answer, which the browser logs: expected here, only here.
    expect(pageErrors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ])
    await input.fill('redis://10.0.0.5:6379/1')
    await page.getByTestId('save-team-store').click()
    await expect.poll(() => input.inputValue()).toBe('redis://10.0.0.5:6379/1')
    expect(await page.content()).not.toContain(PASSWORD)
    await page.screenshot({ path: join(SHOTS, 'settings-team.png') })
  })

  it("shows another machine's partition, and says when admission waits for the team store", async () => {
    await page.getByTestId('nav-concurrency').click()
    const tasks = Array.from({ length: 60 }, (_, i) => ({ type: 't', payload: { n: i } }))
    const file = writeJsonl(dir, 'live.jsonl', tasks)
    const env = { PACER_REDIS_PASSWORD: PASSWORD }
    const args = ['run', file, '--db', join(dir, 'other.db'), '--json', '--store', redis.url]
    const run = startPacer([...args, '--sim-latency-scale', '4'], env)
    try {
      const card = page.locator('[data-testid="partition-card"][data-partition="sim:sim-small"]')
      await card.waitFor({ timeout: 30_000 })
      await redis.stop()
      const outage = card.getByTestId('store-outage')
      await outage.waitFor({ timeout: 30_000 })
      expect(await outage.textContent()).toMatch(/unreachable .*admission paused until it answers/)
      await page.screenshot({ path: join(SHOTS, 'concurrency-team-outage.png') })
      // Settings says so too, beside the store this process uses (the desktop's engine alike).
      await page.getByTestId('nav-settings').click()
      const problem = page.getByTestId('team-store-problem')
      await problem.waitFor({ timeout: 30_000 })
      expect(await problem.textContent()).toMatch(/unreachable .*admission paused until it answers/)
      await problem.scrollIntoViewIfNeeded()
      await page.screenshot({ path: join(SHOTS, 'settings-team-outage.png') })
      await page.getByTestId('nav-concurrency').click()
      await redis.start()
      await outage.waitFor({ state: 'detached', timeout: 30_000 })
      const done = await run.done
      expect(done.code, done.stderr).toBe(0)
    } finally {
      run.child.kill('SIGINT')
    }
    expect(pageErrors).toEqual([])
  })
})
