// --batch-api auto and --deadline through the real CLI: which way the run goes, the one line that
// says why, and plain --batch-api refused a deadline inside the 24 h window.
import { afterEach, expect, it } from 'vitest'
import { runPacer } from '../../helpers/cli'
import { harness, type Harness } from './batch-helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

const tasks = Array.from({ length: 12 }, (_, i) => ({ type: 'a', payload: { i } }))

/** The args of a run with `--batch-api` replaced by `mode`. */
function withMode(h: Harness, file: string, mode: string[], extra: string[] = []): string[] {
  const args = h.args('openai', file, extra)
  args.splice(args.indexOf('--batch-api'), 1, ...mode)
  return args
}

it('auto: through the batch API when the forecast saving is above --batch-min-saving', async () => {
  h = await harness({ errorShare: 0 })
  const file = h.file('auto.jsonl', tasks)
  h.tick()
  const r = await runPacer(
    withMode(h, file, ['--batch-api', 'auto', '--batch-min-saving', '0']),
    h.env('openai'),
  )
  expect(r.code, r.stderr).toBe(0)
  const said = r.stderr.split('\n').filter((l) => l.startsWith('pacer: --batch-api auto'))
  expect(said).toHaveLength(1)
  expect(said[0]).toMatch(
    /through the batch API .*: the forecast saving \S+ is above \$0\.0000 \(--batch-min-saving\), no --deadline/,
  )
  expect(h.submitted('openai')).toHaveLength(tasks.length)
  // pacer summary: what the discount saved, next to what dedup saved.
  const summary = await runPacer(['summary', '--db', h.db])
  expect(summary.stdout).toMatch(
    /via batch: 12 calls at the batch rate \S+ \(live \S+\): the discount saved \S+ \(dedup saved \$0\.0000\)/,
  )
  const json = JSON.parse((await runPacer(['summary', '--db', h.db, '--json'])).stdout) as {
    viaBatch: { calls: number; costUsd: number; listUsd: number; savedUsd: number }
  }
  expect(json.viaBatch.calls).toBe(12)
  expect(json.viaBatch.savedUsd).toBeCloseTo(json.viaBatch.listUsd - json.viaBatch.costUsd, 6)
  expect(json.viaBatch.savedUsd).toBeGreaterThan(0)
}, 120_000)

it('auto: live below the default threshold ($1), and live with a deadline inside 24 h', async () => {
  h = await harness({ errorShare: 0 })
  const file = h.file('auto.jsonl', tasks)
  // Live calls go to the double's /v1/chat/completions, which it does not serve: the run fails,
  // and what matters here is the choice and that nothing was submitted as a batch.
  const cheap = await runPacer(withMode(h, file, ['--batch-api', 'auto']), h.env('openai'))
  expect(cheap.stderr).toMatch(
    /pacer: --batch-api auto: live: the forecast saving \S+ is not above \$1\.0000 \(--batch-min-saving\)/,
  )
  const soon = await runPacer(
    withMode(h, file, [
      '--batch-api',
      'auto',
      '--batch-min-saving',
      '0',
      '--deadline',
      '2h',
      '--new',
    ]),
    h.env('openai'),
  )
  expect(soon.stderr).toMatch(
    /pacer: --batch-api auto: live: the deadline is in 2 h, inside the 24 h completion window/,
  )
  expect(h.submitted('openai')).toEqual([])
}, 120_000)

it('plain --batch-api with a deadline inside 24 h is refused (exit 2), one further away runs', async () => {
  h = await harness({ errorShare: 0 })
  const file = h.file('deadline.jsonl', tasks)
  const refused = await h.run('openai', file, ['--deadline', '2h'])
  expect(refused.code).toBe(2)
  expect(refused.stderr).toMatch(
    /--deadline is in 2 h, inside the batch APIs' 24 h completion window/,
  )
  expect(h.submitted('openai')).toEqual([])
  h.tick()
  const later = await h.run('openai', file, ['--deadline', '2d'])
  expect(later.code, later.stderr).toBe(0)
  expect(h.submitted('openai')).toHaveLength(tasks.length)
  const alone = await runPacer(['run', file, '--deadline', '2h', '--db', h.db])
  expect(alone.code).toBe(2)
  expect(alone.stderr).toMatch(/--deadline goes with --batch-api/)
}, 120_000)
