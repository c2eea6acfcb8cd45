// A provider that asks to wait absurdly long (a retry-after a year ahead, as a date or in seconds),
// against a real `pacer run` whose stderr is a pipe: the pause is said in one line (partition,
// until when, the way out), no timer overflows into a busy loop of warnings and calls, and Ctrl-C
// still ends the run at once with 130.
import { afterEach, describe, expect, it } from 'vitest'
import { runOnVendor, tempDir, until, writeJsonl } from '../../helpers/cli'
import { closeVendors, json, vendor, vendorDatabase } from '../../helpers/fake-vendor'

afterEach(closeVendors)

const YEAR_MS = 365 * 24 * 3_600_000

describe('pacer run: a refusal asking to wait a year', () => {
  it.each([
    ['an HTTP date a year ahead', () => new Date(Date.now() + YEAR_MS).toUTCString()],
    ['99999999 seconds', () => '99999999'],
  ])(
    'retry-after: %s: one pause line on a non-terminal stderr, no timer warning, Ctrl-C ends it',
    async (_, retryAfter) => {
      const server = await vendor((_req, res) =>
        json(
          res,
          429,
          { error: { message: 'quota exhausted', type: 'rate_limit' } },
          { 'retry-after': retryAfter() },
        ),
      )
      const dir = tempDir('pacer-long-pause-')
      const db = vendorDatabase(dir, server)
      const file = writeJsonl(dir, 'batch.jsonl', [
        { type: 'classify', payload: { n: 1 } },
        { type: 'classify', payload: { n: 2 } },
      ])
      const run = runOnVendor(file, db)
      const line = await until(() =>
        /^pacer: openai-compatible:local paused until (\S+Z) .*Ctrl-C stops this run.*$/m.exec(
          run.output().stderr,
        ),
      )
      // Held to an hour (then asked again), not a year, and said so.
      const until_ = Date.parse(line[1]!)
      expect(until_ - Date.now()).toBeLessThanOrEqual(3_600_000 + 1000)
      expect(until_ - Date.now()).toBeGreaterThan(3_500_000)
      expect(line[0]).toMatch(/held to 1 h/)
      expect(line[0]).toMatch(/waiting 1 h;/)

      const interrupted = Date.now()
      run.child.kill('SIGINT')
      await until(() => run.child.exitCode !== null || run.child.signalCode !== null, 30_000)
      const end = await run.done
      expect(end.code, end.stderr).toBe(130)
      // Nothing was in flight, so nothing to wait for: not the 10 s grace in-flight calls get.
      expect(Date.now() - interrupted).toBeLessThan(8000)
      expect(end.stderr).not.toMatch(/TimeoutOverflowWarning/)
      // Said once, and the provider was asked once per task: no loop re-sending while paused.
      expect(end.stderr.match(/paused until/g)).toHaveLength(1)
      expect(server.requests.length).toBeLessThanOrEqual(2)
    },
    60_000,
  )
})
