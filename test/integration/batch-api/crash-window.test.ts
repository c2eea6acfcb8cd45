// The submission's own round trip: a process killed after the vendor created the batch but before
// its id was journaled. OpenAI's batches carry the journal's tag in metadata, so the rerun finds
// the batch (paging GET /v1/batches) and submits nothing again; Anthropic's carry no tag, so the
// rerun sends the work again and says so.
import { afterEach, expect, it } from 'vitest'
import { query } from '../../helpers/cli'
import { until } from '../../helpers/until'
import { harness, ledgerCost, results, type Harness } from './batch-helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const tasks = Array.from({ length: 30 }, (_, i) => ({ type: 'w', payload: { i } }))

/** Starts a run whose batch creation the vendor accepts and never answers, and kills it then. */
async function killedInTheWindow(h: Harness, dialect: 'openai' | 'anthropic', file: string) {
  const first = h.start(dialect, file, ['--lease', '3'])
  const created = () =>
    dialect === 'openai' ? h.vendor.openai.batches.size : h.vendor.anthropic.batches.size
  await until(() => created() === 1, 60_000)
  const journaled = query<{ remote_id: string | null }>(
    h.db,
    'SELECT remote_id FROM provider_batches',
  )
  // The vendor has the batch; the journal has the submission but not its id.
  expect(journaled).toEqual([{ remote_id: null }])
  first.child.kill('SIGKILL')
  await first.done
}

it('openai: killed between the batch created and its id journaled, the rerun finds it by its tag: one submission', async () => {
  const options = { errorShare: 0, hangAfterCreate: true }
  h = await harness(options)
  const file = h.file('window.jsonl', tasks)
  await killedInTheWindow(h, 'openai', file)
  options.hangAfterCreate = false
  // 150 newer batches of someone else's: the lost one is on the second page of the list.
  const input = h.vendor.openai.uploadFile(
    'batch',
    'other.jsonl',
    '{"custom_id":"x","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini"}}\n',
  )
  for (let i = 0; i < 150; i++) {
    h.vendor.openai.createBatch({
      input_file_id: input['id'],
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { pacer_submission: `someone-else-${i}` },
    })
  }
  h.tick()
  const rerun = h.start('openai', file, ['--lease', '3'])
  const again = await Promise.race([
    rerun.done,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`rerun hung: ${rerun.output().stderr}`)), 100_000),
    ),
  ])
  expect(again.code, again.stderr).toBe(0)
  const ours = [...h.vendor.openai.batches.values()].filter((b) =>
    String(b.metadata?.['pacer_submission']).startsWith('pacer-'),
  )
  expect(ours).toHaveLength(1)
  expect(h.submitted('openai').filter((id) => id !== 'x')).toHaveLength(tasks.length)
  // The list was paged to find it.
  expect(h.vendor.calls.some((c) => /^\/v1\/batches\?limit=100&after=/.test(c.path))).toBe(true)
  const rows = query<{ remote_id: string }>(h.db, 'SELECT remote_id FROM provider_batches')
  expect(rows).toEqual([{ remote_id: ours[0]!.id }])
  const records = await results(h.db)
  expect(records.every((x) => x.status === 'succeeded')).toBe(true)
  expect(ledgerCost(h.db).batchRows).toBe(tasks.length)
}, 150_000)

it('anthropic: the same window sends the work again, and the run says so with the batch to cancel', async () => {
  const options = { errorShare: 0, hangAfterCreate: true }
  h = await harness(options)
  const file = h.file('window.jsonl', tasks)
  await killedInTheWindow(h, 'anthropic', file)
  options.hangAfterCreate = false
  h.tick()
  const again = await h.run('anthropic', file, ['--lease', '3'])
  expect(again.code, again.stderr).toBe(0)
  expect(again.stderr).toMatch(/carry no tag to find it by, so its 30 requests are sent again/)
  expect(h.vendor.anthropic.batches.size).toBe(2)
}, 150_000)
