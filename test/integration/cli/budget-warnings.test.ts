// The warning thresholds of a kept cap (50, 80, 100 %): each said once per cap and period, as a
// line on the CLI and a POST to $PACER_BUDGET_WEBHOOK (a loopback receiver here); a second run in
// the same period says none of them again.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { prefixedBatch, runOnVendor, runPacer, tempDir } from '../../helpers/cli'
import { closeVendors, fakeVendor, useVendor, variedUsage } from '../../helpers/fake-vendor'

const PRICE = { input: 1, cachedInput: 1, cacheWrite: 1, output: 10 }
const FLAGS = ['--max-tokens', '20', '--initial-concurrency', '8']

let receiver: Server | undefined
afterEach(async () => {
  await closeVendors()
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()))
})

/** A loopback webhook receiver that keeps every JSON body posted to it. */
async function webhookReceiver(): Promise<{
  url: string
  posts: { percent: number; text: string }[]
}> {
  const posts: { percent: number; text: string }[] = []
  receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (d: Buffer) => (body += d.toString()))
    req.on('end', () => {
      posts.push(JSON.parse(body) as { percent: number; text: string })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, posts }
}

describe('budget warning thresholds', () => {
  it('say 50, 80 and 100 % once per cap and period, on the CLI and to the webhook', async () => {
    const vendor = await fakeVendor({ dialect: 'openai', latencyMs: 20, usage: variedUsage })
    const hook = await webhookReceiver()
    const dir = tempDir('pacer-budget-warn-')
    const db = join(dir, 'pacer.db')
    await useVendor(db, vendor, { prices: { local: PRICE } })
    expect((await runPacer(['budgets', 'set', '0.02', '--daily', '--db', db])).code).toBe(0)
    const env = { PACER_BUDGET_WEBHOOK: hook.url }

    const first = await runOnVendor(prefixedBatch(dir, 'a', 300), db, FLAGS, env).done
    expect(first.code, first.stderr).toBe(5)
    const lines = first.stderr.split('\n').filter((l) => l.includes('% of the daily cap'))
    expect(lines).toEqual([
      expect.stringMatching(
        /^pacer: warning: budget: 50% of the daily cap \(UTC\) on all spend reached for \d{4}-\d\d-\d\d: \$[\d.]+ of \$0\.0200$/,
      ),
      expect.stringMatching(
        /^pacer: warning: budget: 80% of the daily cap \(UTC\) on all spend reached/,
      ),
      // 100 %: the cap holds work (a reservation never lets the spend reach it exactly).
      expect.stringMatching(
        /^pacer: warning: budget: 100% of the daily cap \(UTC\) on all spend reached/,
      ),
    ])
    expect(hook.posts.map((p) => p.percent)).toEqual([50, 80, 100])
    expect(hook.posts[0]).toMatchObject({ capId: 1, period: 'day', capUsd: 0.02, zone: 'UTC' })
    expect(hook.posts[0]!.text).toMatch(/^pacer budget: 50% of the daily cap/)

    // The same day, another batch: the thresholds were said already.
    const second = await runOnVendor(prefixedBatch(dir, 'b', 50), db, FLAGS, env).done
    expect(second.code, second.stderr).toBe(5)
    expect(second.stderr).not.toMatch(/% of the daily cap/)
    expect(hook.posts).toHaveLength(3)
    const list = JSON.parse((await runPacer(['budgets', '--db', db, '--json'])).stdout) as {
      warnedPercent: number
    }[]
    expect(list[0]!.warnedPercent).toBe(100)
  }, 120_000)
})
