// A 300 MB answer (issue 25, smaller item: it was paid and dropped). Pacer reads at most 64 MiB
// of an answer: past that the call is still on the ledger (the provider billed it), its output
// estimated from the bytes and flagged, and the task fails with a reason that says so. The
// failure is kept like a refused request, so a rerun does not pay for the same answer again.
import type { ServerResponse } from 'node:http'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { query, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { vendor, type FakeVendor } from '../../helpers/fake-vendor'

const MB = 1024 * 1024
const HUGE = 300 * MB

/** Writes a 300 MB Chat Completions answer, 1 MB at a time, until done or the client hangs up. */
function hugeAnswer(res: ServerResponse, announce: boolean, sent: { bytes: number }): void {
  const head = '{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":'
  const chunk = Buffer.alloc(MB, 'x')
  res.writeHead(200, {
    'content-type': 'application/json',
    ...(announce ? { 'content-length': String(HUGE) } : {}),
  })
  res.write(`${head}{"role":"assistant","content":"`)
  const more = () => {
    while (sent.bytes < HUGE - 2 * MB && !res.destroyed) {
      sent.bytes += chunk.length
      if (!res.write(chunk)) return void res.once('drain', more)
    }
    if (!res.destroyed) res.end('"}}]}')
  }
  more()
}

let server: FakeVendor
const sent = { chunked: { bytes: 0 }, announced: { bytes: 0 } }
beforeEach(async () => {
  sent.chunked.bytes = 0
  sent.announced.bytes = 0
  server = await vendor((req, res) => {
    const announce = JSON.stringify(req.body).includes('announced')
    hugeAnswer(res, announce, announce ? sent.announced : sent.chunked)
  })
})
afterEach(async () => {
  await server.close()
})

describe('pacer run, an answer of 300 MB', () => {
  it('is ledgered (estimated, priced), fails its task with the reason, and is not paid twice', async () => {
    const dir = tempDir('pacer-oversize-')
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'tasks.jsonl', [
      { type: 'big', payload: { how: 'chunked' } },
      { type: 'big', payload: { how: 'announced' } },
    ])
    const args = ['run', file, '--db', db, '--provider', 'openai', '--model', 'gpt-4o-mini']
    args.push('--base-url', `${server.url}/v1`, '--timeout', '300')
    const env = { OPENAI_API_KEY: 'sk-oversize', OPENAI_BASE_URL: '' }
    const r = await runPacer(args, env)
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).not.toMatch(/internal error|Invalid string length/)
    const reasons = r.stderr.match(/× the answer is larger than the 64 MB Pacer reads .*not kept/g)
    expect(reasons, r.stderr).toHaveLength(2)
    // One request each: an answer too big to read is not asked for again.
    expect(server.requests).toHaveLength(2)
    // Reading stopped near the cap: the rest of the 300 MB was never sent (or held).
    expect(sent.chunked.bytes).toBeLessThan(HUGE / 2)
    expect(sent.announced.bytes).toBeLessThan(HUGE / 2)
    const rows = query<{ status: number; estimated: number; out: number; cost: number | null }>(
      db,
      `SELECT status, estimated, output_tokens AS out, cost_micros AS cost FROM ledger
       WHERE step > 0 ORDER BY task_id`,
    )
    expect(rows).toHaveLength(2)
    for (const row of rows) {
      // Billed as what came: status 200, output estimated from the bytes (about 4 to a token).
      expect(row).toMatchObject({ status: 200, estimated: 1 })
      expect(row.out).toBeGreaterThanOrEqual((64 * MB) / 4)
      expect(row.cost).toBeGreaterThan(0)
    }
    const tasks = query<{ status: string; error: string }>(
      db,
      'SELECT status, error FROM tasks ORDER BY seq',
    )
    expect(tasks).toEqual([
      { status: 'failed', error: expect.stringMatching(/larger than the 64 MB Pacer reads/) },
      { status: 'failed', error: expect.stringMatching(/64 MB Pacer reads \(300 MB or more\)/) },
    ])

    // The same command again: the kept failure is the answer, nothing is sent or paid again.
    const again = await runPacer(args, env)
    expect(again.code).toBe(1)
    expect(server.requests).toHaveLength(2)
    expect(query<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM ledger WHERE step > 0')[0]!.n).toBe(
      2,
    )
  }, 300_000)
})
