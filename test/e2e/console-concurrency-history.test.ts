// The Concurrency chart reads its history from the database, in real Chromium over a fresh `pacer
// serve`: two `pacer run`s finished before the console started (one task on sim-aaa, then a batch
// on sim-small), so nothing is live, yet the busy partition's chart has its run, it is listed
// first though its name sorts second, and the pauses the run took are listed with their reasons.
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { query, runPacer, until, writeJsonl } from '../helpers/cli'

const BUSY = 'sim:sim-small'
const IDLE = 'sim:sim-aaa'
let secondsKept = 0

const s = consoleSession({
  name: 'history',
  async prepare(db, dir) {
    const one = writeJsonl(dir, 'one.jsonl', [
      { type: 'early', payload: { i: 0 }, model: 'sim-aaa' },
    ])
    const first = await runPacer(['run', one, '--db', db])
    if (first.code !== 0) throw new Error(`pacer run failed: ${first.stderr}`)
    const tasks = Array.from({ length: 150 }, (_, i) => ({ type: 'busy', payload: { i } }))
    const batch = writeJsonl(dir, 'busy.jsonl', tasks)
    // A small capacity and slow calls: the run lasts seconds and meets refusals.
    const r = await runPacer([
      'run',
      batch,
      '--db',
      db,
      '--sim-capacity',
      '3',
      '--sim-latency-scale',
      '3',
    ])
    if (r.code !== 0) throw new Error(`pacer run failed: ${r.stderr}`)
    secondsKept = query<{ n: number }>(
      db,
      'SELECT COUNT(*) AS n FROM pacing_samples WHERE partition = ?',
      BUSY,
    )[0]!.n
  },
})

describe('the Concurrency chart after the run, in a fresh console', () => {
  it('draws the run from the database, busy partition first, pauses with their reasons', async () => {
    // The run lasted seconds: one row per second it was busy.
    expect(secondsKept).toBeGreaterThanOrEqual(3)
    await s.page.getByTestId('nav-concurrency').click()
    const cards = s.page.getByTestId('partition-card')
    await until(async () => (await cards.count()) === 2)
    await until(async () => (await cards.first().getAttribute('data-partition')) === BUSY)
    await expect(cards.nth(1).getAttribute('data-partition')).resolves.toBe(IDLE)

    const chart = s.page.getByTestId(`concurrency-chart-${BUSY}`)
    // Every kept second is a point (plus the carried edge and now); none came live.
    await until(async () => Number(await chart.getAttribute('data-points')) >= secondsKept)
    await expect(chart.getAttribute('data-samples')).resolves.toBe('0')
    await expect(chart.getAttribute('data-window')).resolves.toBe('fit')

    // The 2-min window still holds the run (it ended moments ago); the choice is the chart's.
    await s.page.getByTestId('chart-window-2m').click()
    await until(async () => (await chart.getAttribute('data-window')) === '2m')
    expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThanOrEqual(secondsKept)

    // The run's pauses, kept with their reasons, are listed as the run's console listed them.
    const pauses = query<{ reason: string }>(
      s.db,
      'SELECT reason FROM pacing_pauses WHERE partition = ? ORDER BY ts DESC',
      BUSY,
    )
    const card = cards.first()
    if (pauses.length > 0) {
      await card.getByTestId('recent-pauses').waitFor()
      const whys = await card.locator('[data-testid="recent-pause"] .pause-why').allTextContents()
      expect(whys.length).toBe(Math.min(3, pauses.length))
      for (const why of whys) expect(why).not.toMatch(/why unknown/)
    }
    expect(s.errors).toEqual([])
  })
})
