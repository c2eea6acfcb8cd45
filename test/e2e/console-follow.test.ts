// The console follows the database, not its own process: a separate `pacer run` on the same file
// shows in the Queue view as it starts, moves and finishes, without reload, and a finished batch
// keeps no Pause or Cancel.
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { consoleSession } from '../helpers/browser'
import { startPacer, until, writeJsonl } from '../helpers/cli'

const s = consoleSession({ name: 'follow' })

/** `pacer run` of `n` slow simulated tasks on the console's database, in a process of its own. */
function runElsewhere(name: string, n: number) {
  const file = writeJsonl(
    s.dir,
    `${name}.jsonl`,
    Array.from({ length: n }, (_, i) => ({ type: name, payload: { i } })),
  )
  return startPacer([
    'run',
    file,
    '--db',
    s.db,
    '--json',
    '--sim-latency-scale',
    '2',
    '--max-concurrency',
    '4',
  ])
}

const rowOf = (page: Page, name: string) =>
  page.locator('[data-testid="batch-row"]', { hasText: `${name}.jsonl` })

/** Waits for the row to be done, collecting every progress text it showed on the way. */
async function untilDone(page: Page, name: string): Promise<string[]> {
  const row = rowOf(page, name)
  const progress: string[] = []
  await until(async () => {
    const text = (await row.getByTestId('batch-progress').textContent()) ?? ''
    if (progress.at(-1) !== text) progress.push(text)
    return (await row.getAttribute('data-state')) === 'done'
  }, 180_000)
  return progress
}

describe('the Queue view follows batches other processes run', () => {
  it('shows a `pacer run` started after the page opened: it appears, moves, ends done', async () => {
    const { page } = s
    // Long enough that a loaded machine's slow start of the page and the CLI still leaves a
    // run in progress to watch (40 tasks once finished before the page saw it move).
    const run = runElsewhere('elsewhere', 100)
    const row = rowOf(page, 'elsewhere')
    await row.waitFor({ timeout: 30_000 })
    const progress = await untilDone(page, 'elsewhere')
    const result = await run.done
    expect(result.code, result.stderr).toBe(0)
    // Seen at more than one point before the end: the progress moved live.
    expect(new Set(progress).size).toBeGreaterThan(2)
    await expect(row.getByTestId('batch-pause').count()).resolves.toBe(0)
    await expect(row.getByTestId('batch-cancel').count()).resolves.toBe(0)
    expect(s.errors).toEqual([])
  }, 240_000)

  it('a batch already running when the page opens ends done there, Pause and Cancel gone', async () => {
    const { page } = s
    const run = runElsewhere('running-before', 150)
    await until(async () => {
      const list =
        await s.served.api<{ name: string; state: string; counts: { succeeded: number } }[]>(
          'batches:list',
        )
      const b = list.find((x) => x.name.includes('running-before'))
      return b?.state === 'running' && b.counts.succeeded > 0 ? b : undefined
    }, 30_000)
    await page.reload()
    const row = rowOf(page, 'running-before')
    await row.waitFor()
    expect(await row.getAttribute('data-state')).toBe('running')
    await expect(row.getByTestId('batch-pause').count()).resolves.toBe(1)
    await untilDone(page, 'running-before')
    const result = await run.done
    expect(result.code, result.stderr).toBe(0)
    await expect(row.getByTestId('batch-pause').count()).resolves.toBe(0)
    await expect(row.getByTestId('batch-cancel').count()).resolves.toBe(0)
    expect(s.errors).toEqual([])
  }, 240_000)
})
