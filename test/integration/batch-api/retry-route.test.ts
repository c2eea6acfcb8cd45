// `pacer run FILE --retry-failed` without --batch-api, on a file whose batch went through the
// batch API: the lines that expired are resubmitted as a provider batch (half price), not sent
// live at twice it. The double serves no live endpoint: a live retry would fail every task.
import { afterEach, expect, it } from 'vitest'
import { runPacer } from '../../helpers/cli'
import { harness, ledgerCost, LIST_PRICES, results, type Harness } from './batch-helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const HOUR = 3_600_000

it('--retry-failed of a batch-API batch goes through the batch API again, without --batch-api', async () => {
  h = await harness({ errorShare: 0, processMs: 48 * HOUR })
  const file = h.file(
    'slow.jsonl',
    Array.from({ length: 20 }, (_, i) => ({ type: 's', payload: { i } })),
  )
  h.tick(HOUR)
  const first = await h.run('openai', file)
  expect(first.code).toBe(1)
  expect(first.stderr).toMatch(/expired/)
  const before = [...h.submitted('openai')]
  const done = new Set(h.vendor.answers().keys())
  const expired = before.filter((id) => !done.has(id))
  expect(expired.length).toBeGreaterThan(0)

  h.vendor.openai.options.processMs = 60_000
  h.tick()
  const args = h.args('openai', file, ['--retry-failed'])
  args.splice(args.indexOf('--batch-api'), 1)
  const retry = await runPacer(args, h.env('openai'))
  expect(retry.code, retry.stderr).toBe(0)
  expect(retry.stderr).toMatch(/pacer: --retry-failed: through the batch API/)
  expect(h.submitted('openai').slice(before.length).sort()).toEqual(expired.sort())
  const records = await results(h.db)
  expect(records.filter((x) => x.status === 'succeeded')).toHaveLength(expired.length)
  // Every call on the ledger at the batch rate: the double's own bill.
  const cost = ledgerCost(h.db)
  expect(cost.totalMicros).toBe(h.vendor.billMicros(LIST_PRICES))
  expect(cost.batchMicros).toBe(cost.totalMicros)
}, 300_000)
