// A console whose team store was down when `pacer serve --store` started, in real Chromium on the
// built console and a real redis-server started later: Settings → Team mode says it runs alone
// and why, with Try again now; once the store answers, the open page shows the store active
// without a reload, a click or a restart (the team:changed event).
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { ROOT } from '../helpers/cli'
import { startRedis, type RedisServer } from '../helpers/redis'

const SHOTS = join(ROOT, 'test-results', 'screenshots')

let redis: RedisServer

const s = consoleSession({
  name: 'team-join',
  async prepare() {
    mkdirSync(SHOTS, { recursive: true })
    redis = await startRedis()
    await redis.stop()
    return { args: ['--store', redis.url] }
  },
  teardown: () => redis?.close(),
})

describe('the console of a process whose team store was down at its start', () => {
  it('says it runs alone, and shows the store active once it answers, on the open page', async () => {
    await s.page.getByTestId('nav-settings').click()
    const problem = s.page.getByTestId('team-store-problem')
    await problem.waitFor({ timeout: 30_000 })
    expect(await problem.textContent()).toMatch(
      /unreachable.*on this machine alone .*joins the team when the store answers/,
    )
    const active = s.page.getByTestId('team-store-active')
    expect(await active.textContent()).toMatch(/on this machine alone/)
    const retry = s.page.getByTestId('team-store-retry')
    // Tried now, with the server still down: the page stays as it is, nothing breaks.
    await retry.click()
    await expect.poll(() => retry.textContent()).toBe('Try again now')
    await problem.scrollIntoViewIfNeeded()
    await s.page.screenshot({ path: join(SHOTS, 'settings-team-alone.png') })
    await redis.start()
    // Not clicked again: the background retry joins (within 15 s of the click, which started
    // the backoff over), and the page hears of it by the event.
    await expect
      .poll(() => active.textContent(), { timeout: 45_000 })
      .toContain(`through redis://127.0.0.1:${redis.port}/0`)
    await problem.waitFor({ state: 'detached', timeout: 5000 })
    expect(s.errors).toEqual([])
  })
})
