// Operator flows in the console not covered by console.test.ts: the add-task form, a CSV import,
// the pause / resume buttons, settings saved from the Settings view, and the Concurrency view's
// controller and pauses — each checked against the engine through the API and its database, in
// real Chromium over `pacer serve`.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { consoleSession } from '../helpers/browser'
import { ROOT, query, until } from '../helpers/cli'

const s = consoleSession({
  name: 'ops',
  prepare: () => ({ args: ['--sim-latency-scale', '4'] }),
})

describe('console operations', () => {
  it('an empty Queue names the commands that fill this same database', async () => {
    const hint = s.page.getByTestId('queue-empty-cli')
    await hint.waitFor()
    const text = await hint.textContent()
    expect(text).toContain(`npx pacer run FILE.jsonl --db ${s.db}`)
    expect(text).toContain(`npx pacer demo --db ${s.db}`)
  })

  it('the add-task form queues one task that runs', async () => {
    await s.page.getByTestId('add-task-toggle').click()
    await s.page.getByTestId('task-type').fill('greet')
    await s.page.getByTestId('task-payload').fill('{"prompt": "say hello", "n": 1}')
    await s.page.getByTestId('task-steps').fill('2')
    await s.page.getByTestId('task-submit').click()
    await until(
      () => query(s.db, `SELECT 1 FROM tasks WHERE status = 'succeeded'`).length === 1,
      20_000,
    )
    const [task] = query<{ type: string; steps: number; payload: string }>(
      s.db,
      'SELECT type, steps, payload FROM tasks',
    )
    expect(task).toEqual({ type: 'greet', steps: 2, payload: '{"n":1,"prompt":"say hello"}' })
  })

  it('a CSV batch imports with its forecast and runs, the duplicate reused', async () => {
    await s.page.getByTestId('import-file').setInputFiles({
      name: 'tickets.csv',
      mimeType: 'text/csv',
      buffer: readFileSync(join(ROOT, 'resources/examples/tickets.csv')),
    })
    await s.page.getByTestId('import-forecast').waitFor()
    await expect(s.page.getByTestId('import-valid').textContent()).resolves.toContain('4')
    await s.page.getByTestId('import-confirm').click()
    const batch = await until(async () => {
      const list =
        await s.served.api<{ id: string; name: string; counts: Record<string, number> }[]>(
          'batches:list',
        )
      const b = list.find((x) => x.name === 'tickets.csv')
      return b && (b.counts.succeeded ?? 0) + (b.counts.reused ?? 0) === 4 ? b : undefined
    }, 30_000)
    expect(batch.counts).toMatchObject({ succeeded: 3, reused: 1 })
  })

  it('the same file again forecasts $0, every task reused; the output assumption is a field', async () => {
    await s.page.getByTestId('import-file').setInputFiles({
      name: 'tickets.csv',
      mimeType: 'text/csv',
      buffer: readFileSync(join(ROOT, 'resources/examples/tickets.csv')),
    })
    const forecast = s.page.getByTestId('import-forecast')
    await forecast.waitFor()
    const total = forecast.locator('tfoot tr td')
    // Task type, tasks, duplicates, reused, calls, input, output, cost, saved.
    await expect(total.nth(3).textContent()).resolves.toBe('4')
    await expect(total.nth(4).textContent()).resolves.toBe('0')
    await expect(total.nth(7).textContent()).resolves.toBe('$0.0000')
    const notes = s.page.getByTestId('import-forecast-notes')
    await expect(notes.textContent()).resolves.toContain('4 task(s) reuse an answer')
    await expect(s.page.getByTestId('import-forecast-models').textContent()).resolves.toMatch(
      /Priced against sim\/sim-small \(4 tasks\): \$3\.00 input, \$15\.00 output/,
    )
    await expect(s.page.getByTestId('import-output-tokens').textContent()).resolves.toContain(
      'assumed the size of the simulated answer',
    )
    await s.page.getByTestId('import-output-tokens-input').fill('50')
    await s.page.getByTestId('import-output-tokens-input').press('Enter')
    await until(async () =>
      (await s.page.getByTestId('import-output-tokens').textContent())?.includes('assumed 50'),
    )
    await s.page.getByRole('button', { name: 'Discard' }).click()
  })

  it('a batch imported with an agent module (its path typed) runs through the module', async () => {
    const agent = join(ROOT, 'resources/examples/research-agent.mjs')
    await s.page.getByTestId('import-file').setInputFiles({
      name: 'research.jsonl',
      mimeType: 'application/jsonl',
      buffer: readFileSync(join(ROOT, 'resources/examples/research.jsonl')),
    })
    await s.page.getByTestId('import-forecast').waitFor()
    // A browser cannot tell the page where a file lives: `pacer serve` offers no picker.
    await expect(s.page.getByTestId('import-agents-file').count()).resolves.toBe(0)
    await s.page.getByTestId('import-agents-path').fill(agent)
    await s.page.getByTestId('import-agents-path').press('Enter')
    const said = await s.page.getByTestId('import-agents').textContent()
    expect(said).toContain(`${agent} handles research`)
    expect(said).toContain('1 task(s) of type summarize run the built-in loop')
    await s.page.getByTestId('import-confirm').click()
    const batch = await until(async () => {
      const list = await s.served.api<{ id: string; name: string; state: string }[]>('batches:list')
      return list.find((x) => x.name === 'research.jsonl' && x.state === 'done')
    }, 30_000)
    const results = query<{ type: string; result: string }>(
      s.db,
      'SELECT type, result FROM tasks WHERE batch_id = ? ORDER BY seq',
      batch.id,
    )
    expect(JSON.parse(results[0]!.result)).toMatchObject({
      value: { question: expect.any(String), sources: ['leases'] },
    })
  })

  it('Pause and Resume on a batch row stop the calls and start them again', async () => {
    const lines = (type: string, n: number) =>
      Array.from({ length: n }, (_, i) => JSON.stringify({ type, payload: { i } })).join('\n')
    const state = async (id: string) =>
      (await s.served.api<{ id: string; state: string }[]>('batches:list')).find((b) => b.id === id)
        ?.state
    // Every call is a ledger row (executed, throttled, error...): none may be added while paused.
    const calls = (id: string) =>
      query<{ n: number }>(s.db, 'SELECT COUNT(*) AS n FROM ledger WHERE batch_id = ?', id)[0]!.n
    const running = (id: string) =>
      query<{ n: number }>(
        s.db,
        `SELECT COUNT(*) AS n FROM tasks WHERE batch_id = ? AND status = 'running'`,
        id,
      )[0]!.n
    // Long enough (~200 calls of ~0.3 s at a handful at once) to be paused well before it ends.
    const { batchId } = await s.served.api<{ batchId: string }>('batches:import', {
      fileName: 'slow.jsonl',
      content: lines('slow', 200),
    })
    await until(() => calls(batchId) > 0)
    const row = s.page.getByTestId('batch-row').filter({ hasText: 'slow.jsonl' })
    await row.getByTestId('batch-pause').click()
    await until(async () => (await state(batchId)) === 'paused')
    // Tasks already under way finish their steps; after them, nothing more of this batch runs.
    await until(() => running(batchId) === 0)
    const callsWhenPaused = calls(batchId)

    // The pause window is measured in work, not in milliseconds: another batch gets a dozen
    // calls through the same engine meanwhile, which the paused one would have shared.
    const control = await s.served.api<{ batchId: string }>('batches:import', {
      fileName: 'control.jsonl',
      content: lines('control', 200),
    })
    await until(() => calls(control.batchId) >= 12, 30_000)
    expect(calls(batchId)).toBe(callsWhenPaused)
    expect(running(batchId)).toBe(0)
    await s.served.api('batches:cancel', { batchId: control.batchId })

    await row.getByTestId('batch-resume').click()
    await until(async () => (await state(batchId)) === 'running')
    await until(() => calls(batchId) > callsWhenPaused, 30_000)
    await s.served.api('batches:cancel', { batchId })
  })

  it('retention and a price override saved in Settings reach the engine', async () => {
    await s.page.getByTestId('nav-settings').click()
    await s.page.getByTestId('retention-hours').fill('2')
    await s.page.getByTestId('save-retention').click()
    await until(
      async () =>
        (await s.served.api<{ resultTtlMs: number }>('settings:get')).resultTtlMs === 2 * 3_600_000,
    )

    await s.page.getByTestId('add-price').click()
    const prices = s.page.getByTestId('price-overrides')
    await prices.getByPlaceholder('model id').last().fill('my-local-model')
    const cells = prices.locator('tbody tr').last().locator('input[inputmode="decimal"]')
    const count = await cells.count()
    for (let i = 0; i < count; i++) await cells.nth(i).fill(String(i + 1))
    await s.page.getByTestId('save-prices').click()
    const view = await until(async () => {
      const settings = await s.served.api<{
        priceOverrides: Record<string, { input: number; output: number }>
      }>('settings:get')
      return settings.priceOverrides['my-local-model']
    })
    expect(view.input).toBe(1)
    expect(view.output).toBeGreaterThan(0)
  })

  it('the Concurrency view shades pauses and swaps the running controller', async () => {
    const lines = Array.from({ length: 120 }, (_, i) =>
      JSON.stringify({ type: 'paced', payload: { i } }),
    ).join('\n')
    // A floor of 8 against the simulated provider's capacity of 6: the limit cannot be cut below
    // what is refused, and a refusal at the floor pauses the partition (a lone refusal among
    // successes pauses nothing, so the sim's own slow start no longer would).
    await s.served.api('scheduler:set', { partition: '*', params: { min: 8 } })
    const { batchId } = await s.served.api<{ batchId: string }>('batches:import', {
      fileName: 'paced.jsonl',
      content: lines,
    })
    await s.page.getByTestId('nav-concurrency').click()
    const select = s.page.getByTestId('controller-select')
    await until(async () => (await select.inputValue()) === 'adaptive')
    // The chart shades the pause and the list shows it.
    const chart = s.page.getByTestId('concurrency-chart-sim:sim-small')
    await until(async () => Number(await chart.getAttribute('data-pauses')) > 0, 60_000, 100)
    await s.page.locator('[data-cause="pause"]').first().waitFor()
    await s.served.api('scheduler:set', { partition: '*', params: { min: 1 } })
    mkdirSync(join(ROOT, 'test-results', 'screenshots'), { recursive: true })
    await s.page.screenshot({ path: join(ROOT, 'test-results', 'screenshots', 'pauses.png') })

    await select.selectOption('seed')
    await until(
      async () =>
        (await s.served.api<{ controller: string }>('settings:get')).controller === 'seed',
    )
    // The swap is a change of the running partition (its last change may be a cut by now).
    const swapped = s.page.locator('[data-cause="operator"]').filter({ hasText: 'seed controller' })
    await swapped.first().waitFor()
    await select.selectOption('adaptive')
    await until(
      async () =>
        (await s.served.api<{ controller: string }>('settings:get')).controller === 'adaptive',
    )
    await s.served.api('batches:cancel', { batchId })
  })
})
