// The Concurrency view says how a partition is paced and why it paused, in real Chromium over
// `pacer serve`: the simulated provider announces a request budget in its headers and refuses
// beyond its capacity with budget left, which tells the pace that the provider counts in a window
// shorter than the announced minute.
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { until } from '../helpers/cli'

const s = consoleSession({
  name: 'pace',
  // Slow calls: the batch still runs while the view is read.
  prepare: () => ({ args: ['--sim-latency-scale', '4'] }),
})

const PARTITION = 'sim:sim-small'
/** The pace once refusals narrowed it: a second's burst, or one call at a time. */
const LEARNED =
  /^Paced at [\d,]+ requests\/min · (bursts of at most 1 s \(learned: the provider refused inside a minute\)|one call at a time \(learned\))$/
/** What a pause's reason says on the sim: the 429's wait, and the evidence it was taken on. */
const PAUSE_WHY =
  /^429 said wait \d+ ms: (the announced budget is empty|refused again with no success between|a refusal among successes \(pausing on every one\))$|^refused at the floor: backing off$/

describe('the Concurrency view: pace and pauses', () => {
  it('shows the pace the refusals taught, and each pause with its reason', async () => {
    const content = Array.from({ length: 120 }, (_, i) =>
      JSON.stringify({ type: 'paced', payload: { i } }),
    ).join('\n')
    const { batchId } = await s.served.api<{ batchId: string }>('batches:import', {
      fileName: 'paced.jsonl',
      content,
    })
    await s.page.getByTestId('nav-concurrency').click()
    const card = s.page.locator(`[data-testid="partition-card"][data-partition="${PARTITION}"]`)
    const pace = card.getByTestId('pace-line')
    await pace.waitFor({ timeout: 60_000 })
    // The first budget header paces by the announced minute; refusals with budget left narrow it.
    const learned = await until(async () => {
      const text = (await pace.textContent()) ?? ''
      return LEARNED.test(text) ? text : undefined
    }, 60_000)
    expect(learned).toMatch(LEARNED)

    // Pauses on the sim are short and not certain: check every one shown, once the batch ran.
    const rows = card.getByTestId('recent-pause')
    const done = async () => {
      const list = await s.served.api<{ id: string; state: string }[]>('batches:list')
      return list.find((b) => b.id === batchId)?.state === 'done'
    }
    await until(async () => (await rows.count()) > 0 || (await done()), 120_000)
    // Each row with its reason, read in one pass: pauses may still arrive while the batch runs.
    const reasonsOf = (selector: string, reason: string) =>
      s.page
        .locator(selector)
        .evaluateAll((els, r) => els.map((e) => e.querySelector(r)?.textContent ?? null), reason)
    const whys = await reasonsOf(
      `[data-testid="partition-card"][data-partition="${PARTITION}"] [data-testid="recent-pause"]`,
      '.pause-why',
    )
    for (const why of whys) expect(why).toMatch(PAUSE_WHY)
    // The change list's pause rows give the reason without the ISO time the clock already says.
    const listed = await reasonsOf(
      '[data-testid="limit-changes"] [data-cause="pause"]',
      '.change-reason',
    )
    for (const why of listed) expect(why).toMatch(PAUSE_WHY)
    if (whys.length > 0) expect(listed.length).toBeGreaterThan(0)

    if (!(await done())) await s.served.api('batches:cancel', { batchId })
    expect(s.errors).toEqual([])
  }, 240_000)
})
