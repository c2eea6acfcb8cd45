// The calls above the level served go spread over half a round trip (growth-spread.ts): explicit
// clocks for the rule, then the real Scheduler on the fake clock of the bench's family, where the
// siblings of a refusal sent in its instant are what the rule removes.
import { describe, expect, it } from 'vitest'
import { GrowthSpread } from '../../../../src/main/engine/pacing/growth-spread'
import { spreadPair } from '../../../helpers/spread-pair'
import { CONTENDERS, type Contender } from '../../../../bench/scheduler/contenders'
import { raceDraw } from '../../../../bench/scheduler/family-race'
import { familyDraw } from '../../../helpers/family-draw'

const PACER = CONTENDERS.find((c) => c.name.startsWith('Pacer (adaptive'))!

/** The growth's spread with the window spread that counts its calls and round trips. */
function growth() {
  const pair = spreadPair((trips) => new GrowthSpread(trips))
  return {
    ...pair,
    delayMs: (now: number, announced: boolean) => pair.rule.delayMs(now, announced),
  }
}

/** Sends as the scheduler would: `n` calls at `now` or as soon after as the rule lets them. */
function send(g: ReturnType<typeof growth>, now: number, n: number): number[] {
  const sentAt: number[] = []
  while (sentAt.length < n) {
    const wait = g.delayMs(now, false)
    if (wait > 0) {
      now += wait
      continue
    }
    g.admitted(now)
    sentAt.push(now)
  }
  return sentAt
}

describe('GrowthSpread', () => {
  it('holds nothing before a round trip is known, nor while a budget is announced', () => {
    const g = growth()
    expect(send(g, 0, 16).filter((t) => t === 0)).toHaveLength(16)
    for (let i = 0; i < 16; i++) g.settled(1000, 0, 'ok')
    send(g, 1000, 16)
    expect(g.delayMs(1000, true)).toBe(0)
  })

  it('refills a window answered in one instant at once and spreads its growth over half a round trip', () => {
    const g = growth()
    send(g, 0, 16)
    // The window is answered in one instant: 16 refills go at once, 16 more over ~500 ms.
    for (let i = 0; i < 16; i++) g.settled(1000, 0, 'ok')
    const sentAt = send(g, 1000, 32)
    expect(sentAt.filter((t) => t === 1000)).toHaveLength(17)
    const last = sentAt[sentAt.length - 1] as number
    expect(last - 1000).toBeGreaterThan(400)
    expect(last - 1000).toBeLessThan(600)
    // Once that level was served, its refills go at once again.
    for (let i = 0; i < 32; i++) g.settled(2600, 1000, 'ok')
    expect(send(g, 2600, 32).filter((t) => t === 2600)).toHaveLength(32)
  })

  it('a refusal lowers the level whose refills go at once', () => {
    const g = growth()
    send(g, 0, 8)
    for (let i = 0; i < 8; i++) g.settled(1000, 0, 'ok')
    send(g, 1000, 8)
    // Three calls of that window refused: what stays out is the level.
    for (let i = 0; i < 3; i++) g.settled(1020, 1000, 'throttled')
    expect(g.delayMs(1020, false)).toBe(0)
    send(g, 1020, 1)
    expect(g.delayMs(1020, false)).toBeGreaterThan(0)
  })
})

/** Pacer, counting the refusals of calls sent while a refused call was still on its way back. */
function countingSiblings(count: { siblings: number; refused: number }): Contender {
  return {
    name: 'Pacer (siblings counted)',
    drive: (run) => {
      let pendingUntil = Number.NEGATIVE_INFINITY
      const call = run.call.bind(run)
      run.call = async (task) => {
        const sentAt = Date.now()
        const answer = await call(task)
        if (answer.status === 429) {
          count.refused++
          if (sentAt < pendingUntil) count.siblings++
          pendingUntil = Math.max(pendingUntil, Date.now())
        }
        return answer
      }
      return PACER.drive(run)
    },
  }
}

describe('growth spread on the fake clock', () => {
  it('slow start and the regrowth after a rise overshoot a cap by a call, not by a window', async () => {
    // A cap of 40 behind fixed 500-ms calls (a window answered in one instant), rising to 60.
    const d = familyDraw({
      phases: [
        { fromMs: 0, value: 40 },
        { fromMs: 20_000, value: 60 },
      ],
      durationMs: 40_000,
      warmupMs: 10_000,
      latency: { kind: 'fixed', medianMs: 500 },
      tasks: 6000,
    })
    const count = { siblings: 0, refused: 0 }
    const r = await raceDraw(d, countingSiblings(count))
    // Without the rule, 26 siblings: slow start's window sent into 40 slots in one instant, and
    // the regrowth's after the rise; with it, a few refills the served level still counts.
    expect(count.siblings).toBeLessThanOrEqual(10)
    expect(r.throttledShare).toBeLessThan(0.01)
    expect(r.utilization).toBeGreaterThan(0.85)
  })
})
