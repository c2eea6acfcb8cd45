// A `pacer run` killed with kill -9, seen from the console in real Chromium over `pacer serve`: its
// batch is shown interrupted with its run gone (pid and host), and Resume runs it to its end at
// once, without waiting for the dead run's leases.

import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { query, startPacer, until, writeJsonl } from '../helpers/cli'

let killedPid = 0

const s = consoleSession({
  name: 'gone',
  async prepare(db, dir) {
    const file = writeJsonl(
      dir,
      'agents.jsonl',
      Array.from({ length: 40 }, (_, i) => ({ type: 'agent', steps: 3, payload: { i } })),
    )
    // Leases longer than the test: Resume must not wait for one.
    const run = startPacer(['run', file, '--db', db, '--lease', '600', '--sim-latency-scale', '1'])
    await until(
      () =>
        query<{ n: number }>(db, `SELECT COUNT(*) AS n FROM tasks WHERE status = 'succeeded'`)[0]!
          .n >= 2,
      60_000,
    )
    run.child.kill('SIGKILL')
    await run.done
    killedPid = run.child.pid!
    return { args: ['--sim-latency-scale', '0.05'] }
  },
})

describe('a batch whose run was killed, in the console', () => {
  it('is shown interrupted with its run gone; Resume runs it to its end at once', async () => {
    await s.page.getByTestId('nav-queue').click()
    const row = s.page.locator('[data-testid="batch-row"][data-state="interrupted"]')
    await row.waitFor({ timeout: 20_000 })
    const gone = row.getByTestId('batch-owner-gone')
    await expect(gone.textContent()).resolves.toMatch(
      new RegExp(`its run \\(pid ${killedPid} on \\S+\\) is gone`),
    )
    await row.getByTestId('batch-resume').click()
    await until(
      () => query<{ state: string }>(s.db, 'SELECT state FROM batches')[0]?.state === 'done',
      60_000,
    )
    expect(query(s.db, `SELECT status, COUNT(*) AS n FROM tasks GROUP BY status`)).toEqual([
      { status: 'succeeded', n: 40 },
    ])
    await s.page
      .locator('[data-testid="batch-row"][data-state="done"]')
      .waitFor({ timeout: 20_000 })
    expect(s.errors).toEqual([])
  })
})
