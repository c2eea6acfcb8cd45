/**
 * The provider family the pacing bench is judged on (bench/scheduler/family.ts): draws cover every
 * dimension the issue names, and a drawn provider refuses exactly as its draw says and keeps its
 * own books. In virtual time: minutes of traffic in milliseconds, the same every run.
 */
import { describe, expect, it } from 'vitest'
import type { BenchTask } from '../../../bench/scheduler/providers'
import type { ProviderDraw } from '../../../bench/scheduler/family'
import { drawProvider, drawTasks, familyProvider } from '../../../bench/scheduler/family'
import { drawFamily } from '../../../bench/scheduler/family-race'
import { T0, inVirtualTime, sleep } from '../../../bench/scheduler/virtual-time'
import { familyDraw } from '../../helpers/family-draw'

const draw = familyDraw

const task = (id: number, tokens = 1000): BenchTask => ({
  id,
  inputTokens: tokens,
  outputTokens: 0,
  estimate: { inputTokens: tokens, outputTokens: 0 },
  latencyMs: 1000,
})

describe('the provider family', () => {
  it('draws the same provider from the same seed, and every dimension across 300 seeds', () => {
    expect(drawProvider(42)).toEqual(drawProvider(42))
    const draws = drawFamily(300, 7)
    const seen = (f: (d: ProviderDraw) => unknown) => new Set(draws.map(f))
    expect(seen((d) => d.binding)).toEqual(new Set(['concurrency', 'requests', 'tokens']))
    expect(seen((d) => d.burst)).toEqual(new Set(['minute', 'ten-seconds', 'second', 'single']))
    expect(seen((d) => d.headers)).toEqual(new Set(['openai', 'anthropic', 'none']))
    expect(seen((d) => d.refusal.retry)).toEqual(new Set(['none', 'one-second', 'ms', 'exact']))
    expect(seen((d) => d.refusal.status)).toEqual(new Set([429, 503, 529, 'mix']))
    expect(seen((d) => d.latency.kind)).toEqual(new Set(['fixed', 'lognormal', 'heavy', 'load']))
    expect(seen((d) => d.lag)).toEqual(new Set([true, false]))
    expect(seen((d) => d.tenant === null)).toEqual(new Set([true, false]))
    for (const d of draws) {
      expect(d.phases.length).toBeGreaterThanOrEqual(2)
      expect(d.phases.length).toBeLessThanOrEqual(6)
      const lengths = d.phases.map((p, i) => (d.phases[i + 1]?.fromMs ?? d.durationMs) - p.fromMs)
      for (const ms of lengths) expect(ms).toBeGreaterThanOrEqual(2000)
      for (const ms of lengths) expect(ms).toBeLessThanOrEqual(120_000)
      if (d.binding === 'concurrency') {
        for (const p of d.phases) expect(p.value).toBeGreaterThanOrEqual(1)
        for (const p of d.phases) expect(p.value).toBeLessThanOrEqual(64)
      }
    }
    // A fall followed at once by a rise to at least twice the low level, in many schedules.
    const riseAfterFall = draws.filter((d) =>
      d.phases.some((p, i) => {
        const next = d.phases[i + 1]
        const before = d.phases[i - 1]
        return before && next && p.value < before.value && next.value >= 2 * p.value
      }),
    )
    expect(riseAfterFall.length).toBeGreaterThan(60)
  })

  it('a concurrency cap refuses the call beyond it, with the status and retry header drawn', async () => {
    for (const [status, retry, header] of [
      [429, 'one-second', 'retry-after'],
      [503, 'none', undefined],
    ] as const) {
      const p = familyProvider(draw({ refusal: { status, retry } }))
      const answers = await inVirtualTime(() =>
        Promise.all([0, 1, 2, 3, 4].map((id) => p.call(task(id)))),
      )
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, status])
      expect(answers[4]!.headers['retry-after']).toBe(header === undefined ? undefined : '1')
    }
  })

  it('reports its own utilization: half the slots for the whole schedule is 0.5', async () => {
    const p = familyProvider(draw({ durationMs: 10_000 }))
    await inVirtualTime(async () => {
      // Two calls of 1 s back to back on two of four slots, for 10 s.
      for (let round = 0; round < 10; round++) {
        await Promise.all([p.call(task(2 * round)), p.call(task(2 * round + 1))])
      }
    })
    expect(p.utilization(T0 + 10_000)).toBeCloseTo(0.5, 2)
  })

  it('a per-minute limit enforced per second refuses a burst the announced remaining allows', async () => {
    const p = familyProvider(
      draw({
        binding: 'requests',
        phases: [{ fromMs: 0, value: 120 }],
        burst: 'second',
        headers: 'openai',
      }),
    )
    const answers = await inVirtualTime(() =>
      Promise.all([0, 1, 2, 3].map((id) => p.call(task(id)))),
    )
    // 120 a minute is 2 a second: the third and fourth call of the same instant are refused.
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429, 429])
    expect(answers[2]!.headers['x-ratelimit-limit-requests']).toBe('120')
    expect(Number(answers[2]!.headers['x-ratelimit-remaining-requests'])).toBeGreaterThan(100)
    // One second later there is room for two again.
    const later = await inVirtualTime(async () => {
      await sleep(1000)
      return Promise.all([4, 5].map((id) => p.call(task(id))))
    })
    expect(later.map((a) => a.status)).toEqual([200, 200])
  })

  it('a token limit charges max_tokens at admission: kept, or its unused part given back', async () => {
    // 1,000 tokens in, 100 out, max_tokens 600; 60,000 tokens a minute (1,000 a second).
    const call = (id: number): BenchTask => ({
      id,
      inputTokens: 1000,
      outputTokens: 100,
      estimate: { inputTokens: 1000, outputTokens: 600 },
      latencyMs: 1000,
    })
    const cases = [
      // charge, remaining after the first call, after the second (sent at its answer), served
      ['used', 58_900, 58_800, 2200],
      ['reserve', 58_400, 57_800, 3200],
      ['reserve-refund', 58_400, 58_300, 2200],
    ] as const
    for (const [charge, first, second, served] of cases) {
      const p = familyProvider(
        draw({
          binding: 'tokens',
          phases: [{ fromMs: 0, value: 60_000 }],
          headers: 'openai',
          charge,
        }),
      )
      const { answers, books } = await inVirtualTime(async () => {
        const a = await p.call(call(0))
        const b = await p.call(call(1))
        return { answers: [a, b], books: p.books(Date.now()) }
      })
      const remaining = answers.map((a) => Number(a.headers['x-ratelimit-remaining-tokens']))
      // The second call went a second later: 1,000 tokens refilled, and what was given back.
      expect({ charge, remaining }).toEqual({ charge, remaining: [first, second] })
      expect(answers.map((a) => a.usage?.outputTokens)).toEqual([100, 100])
      expect(books.served).toBe(served)
    }
    // A bucket of a second (1,300 tokens: a mean call at least) full again while the call was out:
    // what is given back finds no room and is lost, as refill is. The books still add up: served
    // 1,100, the bucket full, the rest lost.
    const second = familyProvider(
      draw({
        binding: 'tokens',
        phases: [{ fromMs: 0, value: 60_000 }],
        burst: 'second',
        headers: 'openai',
        charge: 'reserve-refund',
      }),
    )
    const books = await inVirtualTime(async () => {
      await second.call({ ...call(0), latencyMs: 5000 })
      return second.books(Date.now())
    })
    expect(books.served).toBe(1100)
    expect(books.level).toBe(1300)
    // Allowed: the full bucket at the start and 5 s of refill; lost: all but what was served.
    expect(books.served + books.overflow + books.level).toBeCloseTo(1300 + 5000, 6)
    // Drawn for token limits only, from a stream of its own: each of the three appears.
    const tokens = drawFamily(300, 7).filter((d) => d.binding === 'tokens')
    expect(new Set(tokens.map((d) => d.charge))).toEqual(
      new Set(['used', 'reserve', 'reserve-refund']),
    )
    expect(drawFamily(300, 7).filter((d) => d.binding !== 'tokens' && d.charge !== 'used')).toEqual(
      [],
    )
  })

  it('a tenant takes its share of the slots; a rise of ours is recorded with its regain time', async () => {
    const p = familyProvider(
      draw({
        phases: [
          { fromMs: 0, value: 2 },
          { fromMs: 5000, value: 6 },
        ],
        durationMs: 20_000,
        tenant: [{ fromMs: 0, value: 0.5 }],
      }),
    )
    await inVirtualTime(async () => {
      expect(p.capacityNow()).toBe(1)
      await sleep(7000)
      expect(p.capacityNow()).toBe(3)
      // 3 of 6 are ours: three calls at once regain it at 7 s, 2 s after the rise.
      await Promise.all([0, 1, 2].map((id) => p.call(task(id))))
    })
    expect(p.rises()).toEqual([{ at: T0 + 5000, to: 3, regainedMs: 2000, censoredMs: 0 }])
  })

  it('draws tasks of the draw: sizes, estimates within 10 %, latencies around the median', () => {
    const d = drawProvider(9)
    const tasks = drawTasks(d)
    expect(tasks).toHaveLength(d.tasks)
    for (const t of tasks) {
      expect(Math.abs(t.estimate.inputTokens / t.inputTokens - 1)).toBeLessThanOrEqual(0.11)
      expect(t.latencyMs).toBeGreaterThan(0)
    }
  })
})

describe('the contenders', () => {
  it('each answers every task of a draw; the fixed ones hold 12, the oracle is never refused', async () => {
    const { CONTENDERS } = await import('../../../bench/scheduler/contenders')
    const { raceDraw } = await import('../../../bench/scheduler/family-race')
    const d = draw({ phases: [{ fromMs: 0, value: 20 }], durationMs: 20_000, tasks: 300 })
    const byName = new Map<string, Awaited<ReturnType<typeof raceDraw>>>()
    for (const c of CONTENDERS) {
      if (c.applies && !c.applies(undefined)) continue
      // raceDraw throws unless every task was answered.
      byName.set(c.name, await raceDraw(d, c))
    }
    expect([...byName.keys()]).toEqual([
      'p-queue 12 + retry',
      'Bottleneck 12 + retry',
      'seed (Scheduler + SeedAimd)',
      'oracle (told the capacity)',
      'Pacer (adaptive + budget)',
    ])
    // 12 of 20 slots: the fixed contenders can use at most 0.6 of the cap, and are never refused.
    for (const name of ['p-queue 12 + retry', 'Bottleneck 12 + retry']) {
      expect(byName.get(name)!.utilization).toBeLessThanOrEqual(0.6 + 1e-9)
      expect(byName.get(name)!.throttledShare).toBe(0)
    }
    // The seed at parity keeps the memo's ceiling of 12 too.
    expect(byName.get('seed (Scheduler + SeedAimd)')!.utilization).toBeLessThanOrEqual(0.6 + 1e-9)
    expect(byName.get('oracle (told the capacity)')!.throttledShare).toBe(0)
    expect(byName.get('oracle (told the capacity)')!.utilization).toBeGreaterThan(0.97)
    expect(byName.get('Pacer (adaptive + budget)')!.utilization).toBeGreaterThan(0.8)
  })
})

describe('Pacer as several processes on one database (processes.ts)', () => {
  it('answers every task once between three schedulers sharing one SQLite file, at the cap', async () => {
    const { pacerProcesses } = await import('../../../bench/scheduler/processes')
    const { raceDraw } = await import('../../../bench/scheduler/family-race')
    const d = draw({ phases: [{ fromMs: 0, value: 20 }], durationMs: 20_000, tasks: 300 })
    const sent: number[] = []
    const three = pacerProcesses(3)
    // raceDraw throws unless every task was answered; every task is someone's (split three ways).
    const r = await raceDraw(d, {
      ...three,
      drive: (run) => {
        const call = run.call.bind(run)
        return three.drive({
          ...run,
          call: (t) => {
            sent.push(t.id)
            return call(t)
          },
        })
      },
    })
    expect(new Set(sent).size).toBe(300)
    // One cap of 20 slots between them: the shared store keeps the three under it together.
    expect(r.utilization).toBeGreaterThan(0.7)
    expect(r.throttledShare).toBeLessThan(0.1)
  })
})
