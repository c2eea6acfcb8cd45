// Team mode in the console: `pacer serve --store` on a real redis-server, real Chromium on the
// built console. Settings shows this process's store with its password masked and refuses a URL
// with a password; a partition another machine drives shows up from the store, and its card says
// when admission waits for a team store that is gone.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { ROOT, startPacer, writeJsonl } from '../helpers/cli'
import { startRedis, type RedisServer } from '../helpers/redis'

const SHOTS = join(ROOT, 'test-results', 'screenshots')
const PASSWORD = 'e2e-team-pw-5151'

let redis: RedisServer

const s = consoleSession({
  name: 'team',
  async prepare() {
    mkdirSync(SHOTS, { recursive: true })
    redis = await startRedis({ password: PASSWORD })
    return { args: ['--store', redis.url], env: { PACER_REDIS_PASSWORD: PASSWORD } }
  },
  teardown: () => redis?.close(),
})

describe('the console in team mode', () => {
  it('Settings shows the store masked, stores a URL without a password and refuses one with it', async () => {
    await s.page.getByTestId('nav-settings').click()
    const active = s.page.getByTestId('team-store-active')
    await expect
      .poll(() => active.textContent())
      .toContain(`redis://:***@127.0.0.1:${redis.port}/0`)
    const input = s.page.getByTestId('team-store-url')
    await input.fill(`redis://:${PASSWORD}@10.0.0.5:6379/0`)
    await s.page.getByTestId('save-team-store').click()
    await expect
      .poll(() => s.page.locator('.settings-section', { has: input }).textContent())
      .toContain('PACER_REDIS_PASSWORD')
    // The refusal was the server's 400 answer, which the browser logs: expected here, only here.
    // Chromium reports it on its own schedule, possibly after the page shows the refusal.
    const refused =
      'Failed to load resource: the server responded with a status of 400 (Bad Request)'
    await expect.poll(() => s.errors).toContain(refused)
    expect(s.errors.splice(0)).toEqual([refused])
    await input.fill('redis://10.0.0.5:6379/1')
    await s.page.getByTestId('save-team-store').click()
    await expect.poll(() => input.inputValue()).toBe('redis://10.0.0.5:6379/1')
    expect(await s.page.content()).not.toContain(PASSWORD)
    await s.page.screenshot({ path: join(SHOTS, 'settings-team.png') })
  })

  it("shows another machine's partition, and says when admission waits for the team store", async () => {
    await s.page.getByTestId('nav-concurrency').click()
    const tasks = Array.from({ length: 60 }, (_, i) => ({ type: 't', payload: { n: i } }))
    const file = writeJsonl(s.dir, 'live.jsonl', tasks)
    const env = { PACER_REDIS_PASSWORD: PASSWORD }
    const args = ['run', file, '--db', join(s.dir, 'other.db'), '--json', '--store', redis.url]
    const run = startPacer([...args, '--sim-latency-scale', '4'], env)
    try {
      const card = s.page.locator('[data-testid="partition-card"][data-partition="sim:sim-small"]')
      await card.waitFor({ timeout: 30_000 })
      await redis.stop()
      const outage = card.getByTestId('store-outage')
      await outage.waitFor({ timeout: 30_000 })
      expect(await outage.textContent()).toMatch(/unreachable .*admission paused until it answers/)
      await s.page.screenshot({ path: join(SHOTS, 'concurrency-team-outage.png') })
      // Settings says so too, beside the store this process uses (the desktop's engine alike).
      await s.page.getByTestId('nav-settings').click()
      const problem = s.page.getByTestId('team-store-problem')
      await problem.waitFor({ timeout: 30_000 })
      expect(await problem.textContent()).toMatch(/unreachable .*admission paused until it answers/)
      await problem.scrollIntoViewIfNeeded()
      await s.page.screenshot({ path: join(SHOTS, 'settings-team-outage.png') })
      await s.page.getByTestId('nav-concurrency').click()
      await redis.start()
      await outage.waitFor({ state: 'detached', timeout: 30_000 })
      const done = await run.done
      expect(done.code, done.stderr).toBe(0)
    } finally {
      run.child.kill('SIGINT')
    }
    expect(s.errors).toEqual([])
  })
})
