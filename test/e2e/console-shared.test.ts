// The console watching a batch it does not run: `pacer serve` and a separate `pacer run` on one
// database, real Chromium on the built console. The Concurrency view shows the run's partition
// live, and its slider writes the budget the run paces by.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { ROOT, query, startPacer, until, writeJsonl } from '../helpers/cli'

const SHOTS = join(ROOT, 'test-results', 'screenshots')
const PARTITION = 'sim:sim-small'

const s = consoleSession({
  name: 'shared',
  prepare: () => void mkdirSync(SHOTS, { recursive: true }),
})

describe('the console and a separate pacer run on one database', () => {
  it("shows the live chart of the run's partition, and its slider tunes the run's budget", async () => {
    await s.page.getByTestId('nav-concurrency').click()
    const tasks = Array.from({ length: 80 }, (_, i) => ({
      type: 'classify',
      payload: { prompt: `ticket ${i}: ${'words '.repeat(30)}` },
    }))
    const file = writeJsonl(s.dir, 'run.jsonl', tasks)
    const run = startPacer(['run', file, '--db', s.db, '--json', '--sim-latency-scale', '4'])
    try {
      // The console runs nothing itself: the card and its chart come from the run's leases.
      const card = s.page.locator(`[data-testid="partition-card"][data-partition="${PARTITION}"]`)
      await card.waitFor({ timeout: 30_000 })
      const inflight = async () =>
        Number(
          (await card
            .locator('.mini-stat', { hasText: 'in flight' })
            .locator('dd')
            .textContent()) ?? '0',
        )
      await until(async () => (await inflight()) > 0, 20_000, 100)
      const chart = s.page.getByTestId(`concurrency-chart-${PARTITION}`)
      const samplesAt = async () => Number(await chart.getAttribute('data-samples'))
      const before = await samplesAt()
      await until(async () => (await samplesAt()) >= before + 4, 10_000, 100)
      await s.page.screenshot({ path: join(SHOTS, 'concurrency-shared.png') })

      // The slider writes the shared params: the run's partition row carries them.
      await card.getByTestId('slider-max').fill('3')
      await until(() => {
        const [row] = query<{ params: string }>(
          s.db,
          'SELECT params FROM pacing_partitions WHERE partition = ?',
          PARTITION,
        )
        return row && (JSON.parse(row.params) as { max: number }).max === 3
      }, 10_000)
    } finally {
      run.child.kill('SIGINT')
      await run.done
    }
    expect(s.errors).toEqual([])
  })
})
