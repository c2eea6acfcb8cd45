// The team ledger in the console: two machines (`pacer run --store`, each with its own database)
// append their rows to a real redis-server; `pacer serve --store` on a third database shows, in
// real Chromium, the Spend view's "Team" side with both machines' rows, and downloads the team's
// events CSV with a machine column.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { ROOT, runPacer, writeJsonl } from '../helpers/cli'
import { startRedis, type RedisServer } from '../helpers/redis'

const SHOTS = join(ROOT, 'test-results', 'screenshots')

let redis: RedisServer
const localRows = new Map<string, number>()

const s = consoleSession({
  name: 'team-ledger',
  async prepare(_db, dir) {
    redis = await startRedis()
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
})
