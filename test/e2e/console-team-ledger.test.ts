// The team ledger in the console: two machines (`pacer run --store`, each with its own database)
// append their rows to a real redis-server; `pacer serve --store` on a third database shows, in
// real Chromium, the Spend view's "Team" side with both machines' rows, and downloads the team's
// events CSV with a machine column. With Redis stopped, Spend's Team side and Settings say how many
// of this machine's rows wait for it, until it answers again.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { query, ROOT, runPacer, writeJsonl } from '../helpers/cli'
import { startRedis, type RedisServer } from '../helpers/redis'

const SHOTS = join(ROOT, 'test-results', 'screenshots')

let redis: RedisServer
const localRows = new Map<string, number>()

const s = consoleSession({
  name: 'team-ledger',
  async prepare(_db, dir) {
    // Persisted: the machines' rows are still there after the outage of the second test.
    redis = await startRedis({ persist: true })
    for (const [machine, n] of [
      ['alpha', 12],
      ['beta', 7],
    ] as const) {
      const tasks = Array.from({ length: n }, (_, i) => ({
        type: i % 2 ? 'classify' : 'translate',
        payload: { machine, i },
      }))
      const db = join(dir, `${machine}.db`)
      const file = writeJsonl(dir, `${machine}.jsonl`, tasks)
      const run = await runPacer(['run', file, '--db', db, '--json', '--store', redis.url], {
        PACER_MACHINE: machine,
      })
      expect(run.code, run.stderr).toBe(0)
      const out = await runPacer(['export', '--db', db, '--out', '-'])
      localRows.set(machine, out.stdout.trimEnd().split('\r\n').length - 1)
    }
    return { args: ['--store', redis.url], env: { PACER_MACHINE: 'console' } }
  },
  teardown: () => redis?.close(),
})

describe("the console's team ledger", () => {
  it("Spend's Team side shows both machines' rows, and exports the team's CSV", async () => {
    await s.page.getByTestId('nav-spend').click()
    await s.page.getByTestId('scope-team').click()
    const rows = s.page.getByTestId('team-machine-table').getByTestId('spend-row')
    await expect
      .poll(async () => new Set(await rows.evaluateAll((r) => r.map((e) => e.dataset.machine))))
      .toEqual(new Set(['alpha', 'beta']))
    const runsOf = async (machine: string) =>
      (
        await s.page
          .locator(`[data-testid="team-machine-table"] [data-machine="${machine}"]`)
          .evaluateAll((r) => r.map((e) => Number(e.dataset.runs)))
      ).reduce((a, b) => a + b, 0)
    expect(await runsOf('alpha')).toBe(12)
    expect(await runsOf('beta')).toBe(7)
    const total = s.page.getByTestId('team-spend-table').getByTestId('spend-totals')
    expect(await total.getAttribute('data-runs')).toBe('19')
    expect(await s.page.getByTestId('team-spend-hint').textContent()).toMatch(/from 2 machine\(s\)/)
    await s.page.screenshot({ path: join(SHOTS, 'spend-team.png') })

    const [download] = await Promise.all([
      s.page.waitForEvent('download'),
      s.page.getByTestId('export-events').click(),
    ])
    expect(download.suggestedFilename()).toMatch(/^pacer-team-events/)
    const csv = parse(readFileSync(await download.path(), 'utf8'), { columns: true }) as Record<
      string,
      string
    >[]
    for (const [machine, n] of localRows) {
      expect(csv.filter((r) => r.machine === machine)).toHaveLength(n)
    }
    expect(csv).toHaveLength([...localRows.values()].reduce((a, b) => a + b, 0))

    // Back to this machine: its own (empty) ledger, the range buttons again.
    await s.page.getByTestId('scope-machine').click()
    await s.page.getByTestId('spend-range').waitFor()
    expect(s.errors).toEqual([])
  })

  it("says how many of this machine's rows wait for the team store while Redis is stopped, and nothing once it answers", async () => {
    await s.page.getByTestId('nav-spend').click()
    await s.page.getByTestId('scope-team').click()
    await s.page.getByTestId('team-spend').waitFor()
    const spendLine = s.page.getByTestId('spend-team-backlog')
    expect(await spendLine.count()).toBe(0)
    await redis.stop()
    // Another process on this database, not in team mode, spends meanwhile: this machine's rows.
    const tasks = Array.from({ length: 9 }, (_, i) => ({ type: 'classify', payload: { late: i } }))
    const file = writeJsonl(s.dir, 'offline.jsonl', tasks)
    const run = await runPacer(['run', file, '--db', s.db, '--json'])
    expect(run.code, run.stderr).toBe(0)
    const [{ n }] = query<{ n: number }>(s.db, 'SELECT COUNT(*) AS n FROM ledger') as [
      { n: number },
    ]
    expect(n).toBeGreaterThanOrEqual(9)
    const line = new RegExp(
      `^${n} ledger rows of this machine not yet in the team store \\(Redis unreachable since \\d\\d:\\d\\d:\\d\\d\\)$`,
    )
    await expect.poll(() => spendLine.textContent(), { timeout: 30_000 }).toMatch(line)
    await s.page.screenshot({ path: join(SHOTS, 'spend-team-backlog.png') })
    await s.page.getByTestId('nav-settings').click()
    const settingsLine = s.page.getByTestId('team-store-backlog')
    await expect.poll(() => settingsLine.textContent(), { timeout: 30_000 }).toMatch(line)

    await redis.start()
    await settingsLine.waitFor({ state: 'detached', timeout: 30_000 })
    await s.page.getByTestId('nav-spend').click()
    expect(await spendLine.count()).toBe(0)
    // The rows went: the team's ledger shows this machine too.
    await s.page.getByTestId('team-refresh').click()
    const mine = s.page.locator('[data-testid="team-machine-table"] [data-machine="console"]')
    await expect.poll(() => mine.count(), { timeout: 30_000 }).toBeGreaterThan(0)
    expect(s.errors).toEqual([])
  })
})
