// What `pacer run --batch-api` costs besides the vendor's wait: N tasks through the batch double
// (test/helpers/batch-vendor) on a fast clock (its clock moves 5 s every 20 ms of real time, so a
// batch's minute of processing passes in about a quarter of a second), run as a user runs it: a
// real `pacer run` child on a fresh database. Reported: the wall time, the part of it that is the
// fixed waits the run is configured with (the round's settle and the poll interval, a few per
// round), the rest per task (the engine's overhead: queueing, claims, journal, ledger, results),
// the provider batches submitted and the HTTP requests the vendor received.
//
//   npm run bench:batch-api -- [N] [VENDOR]     N distinct tasks (default 2000), openai|anthropic
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { query, runPacer, tempDir, writeJsonl } from '../test/helpers/cli'
import { startBatchVendor } from '../test/helpers/batch-vendor/server'
import type { FakeClock } from '../test/helpers/clock'

const N = Number(process.argv[2] ?? 2000)
const VENDOR = (process.argv[3] ?? 'openai') as 'openai' | 'anthropic'
const MODEL = VENDOR === 'openai' ? 'gpt-4o-mini' : 'claude-haiku-4-5'
const POLL_MS = 50
const SETTLE_MS = 300

async function main(): Promise<void> {
  const vendor = await startBatchVendor({ errorShare: 0 })
  const ticker = setInterval(() => (vendor.clock as FakeClock).advance(5_000), 20)
  const dir = tempDir('pacer-bench-batch-')
  const db = join(dir, 'pacer.db')
  const file = writeJsonl(
    dir,
    'bench.jsonl',
    Array.from({ length: N }, (_, i) => ({ type: 'bench', payload: { i } })),
  )
  const args = ['run', file, '--batch-api', '--provider', VENDOR, '--model', MODEL]
  args.push('--base-url', VENDOR === 'openai' ? vendor.openaiBase : vendor.url, '--db', db)
  const env = {
    [VENDOR === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY']: 'sk-bench',
    PACER_BATCH_POLL_MS: String(POLL_MS),
    PACER_BATCH_SETTLE_MS: String(SETTLE_MS),
  }
  const t0 = performance.now()
  const r = await runPacer(args, env)
  const wallMs = performance.now() - t0
  clearInterval(ticker)
  await vendor.close()
  if (r.code !== 0) throw new Error(`pacer run exited ${r.code}: ${r.stderr}`)
  const batches = query<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM provider_batches')[0]!.n
  const polls = vendor.calls.filter((c) => c.method === 'GET').length
  // The run's own waits: one settle per round, and a poll interval before each poll.
  const waitsMs = SETTLE_MS * batches + POLL_MS * polls
  const overheadMs = Math.max(0, wallMs - waitsMs)
  const submitted = VENDOR === 'openai' ? vendor.openai.submitted : vendor.anthropic.submitted
  console.log(`batch-api bench: ${N} tasks via the ${VENDOR} double (fast clock)`)
  console.log(`  wall ${Math.round(wallMs)} ms (pacer run child, start-up included)`)
  console.log(
    `  fixed waits ${waitsMs} ms (settle ${SETTLE_MS} ms x ${batches}, poll ${POLL_MS} ms x ${polls})`,
  )
  console.log(`  overhead ${Math.round(overheadMs)} ms: ${(overheadMs / N).toFixed(3)} ms per task`)
  console.log(
    `  provider batches ${batches}, requests submitted ${submitted.length} (distinct ${new Set(submitted).size}), vendor HTTP requests ${vendor.calls.length}`,
  )
}

void main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
