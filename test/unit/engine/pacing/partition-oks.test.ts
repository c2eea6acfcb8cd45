// A refusal among successes is lone whichever worker's calls succeeded (partition-oks.ts): two
// schedulers on two connections to one SQLite file, as two processes on one database. Fake timers
// for the wake-ups and one fake clock for now(), moved together.
import { afterEach, describe, expect, it } from 'vitest'
import { PartitionOks } from '../../../../src/main/engine/pacing/partition-oks'
import { closeTwoProcesses, flush, twoProcesses as twoOn } from './two-processes'

afterEach(closeTwoProcesses)

/** Two schedulers sharing one partition through the file, call by call (no block). */
function twoProcesses() {
  const { a, b, pass, look, clock } = twoOn({ initial: 2, max: 2 }, false)
  const pausedUntil = () =>
    look.prepare("SELECT paused_until FROM pacing_partitions WHERE partition = 'p'").pluck().get()
  return { a, b, pass, pausedUntil, now: () => clock.now() }
}

const SLOW_DOWN = { headers: { 'retry-after': '1' } }

type Two = ReturnType<typeof twoProcesses>

/** `calls` calls of `s`, one after another, each served after 200 ms. */
async function succeed(s: Two['a'], pass: Two['pass'], calls: number): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const call = await s.acquire('p')
    await pass(200)
    call.release('ok')
  }
}

describe('a refusal among another worker’s successes', () => {
  it('does not pause the partition: the other worker goes on at once', async () => {
    const { a, b, pass, pausedUntil, now } = twoProcesses()
    // A sends back to back and succeeds; B's first call of its own is refused.
    await succeed(a, pass, 3)
    const held = await a.acquire('p')
    const probe = await b.acquire('p')
    await pass(20)
    probe.release('throttled', SLOW_DOWN)
    expect(pausedUntil()).toBeLessThanOrEqual(now())
    await pass(200)
    held.release('ok')
    let next = false
    void a.acquire('p').then((c) => {
      next = true
      c.release('ok')
    })
    await flush()
    expect(next).toBe(true)
  })

  it('does not pause it for a second call refused with the first, sent before it came back', async () => {
    const { a, b, pass, pausedUntil, now } = twoProcesses()
    await succeed(a, pass, 1)
    // B sends two calls at once (its share of the limit); both are refused.
    const one = await b.acquire('p')
    const two = await b.acquire('p')
    await pass(20)
    one.release('throttled', SLOW_DOWN)
    two.release('throttled', SLOW_DOWN)
    expect(pausedUntil()).toBeLessThanOrEqual(now())
  })

  it('still pauses it when nobody succeeded since the last refusal', async () => {
    const { a, b, pass, pausedUntil, now } = twoProcesses()
    const first = await a.acquire('p')
    await pass(20)
    first.release('throttled', SLOW_DOWN)
    // B waits out that pause, and is refused in its turn.
    const waiting = b.acquire('p')
    await pass(1200)
    const second = await waiting
    await pass(20)
    second.release('throttled', SLOW_DOWN)
    expect(pausedUntil()).toBeGreaterThan(now())
  })
})

describe('PartitionOks', () => {
  it('tells successes since this worker’s last refusal, every worker’s counted', () => {
    const oks = new PartitionOks()
    expect(oks.lone(0)).toBe(false)
    oks.seen(3)
    expect(oks.lone(0)).toBe(true)
    oks.seen(3, 100)
    expect(oks.lone(100)).toBe(false)
    oks.seen(undefined)
    oks.seen(2)
    expect(oks.lone(100)).toBe(false)
    oks.seen(4)
    expect(oks.lone(100)).toBe(true)
  })

  it('takes a call sent before the last refusal came back as refused with it', () => {
    const oks = new PartitionOks()
    oks.seen(5, 1000)
    expect(oks.lone(990)).toBe(true)
    expect(oks.lone(1000)).toBe(false)
  })

  it('leaves the rule as it was where the store counts nothing', () => {
    const oks = new PartitionOks()
    oks.seen(undefined, 1000)
    expect(oks.lone(990)).toBe(false)
  })
})
