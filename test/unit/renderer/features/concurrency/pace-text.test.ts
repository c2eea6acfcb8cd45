import { describe, expect, it } from 'vitest'
import type { PauseView } from '../../../../../src/shared/contract'
import { formatClock } from '../../../../../src/renderer/src/lib/format'
import {
  paceLine,
  pauseTitle,
  pauseWhy,
  recentPauses,
} from '../../../../../src/renderer/src/features/concurrency/pace-text'
import { pauseAt } from '../../../../../src/renderer/src/features/concurrency/pause-bands'

const pause = (partition: string, ts: number, until: number, why?: string): PauseView => ({
  partition,
  ts,
  until,
  reason: `paused until ${new Date(until).toISOString()}${why ? ` (${why})` : ''}`,
})

describe('the pace line', () => {
  it('says the rate that is ours and the burst: the announced minute, a learned second, one at a time', () => {
    expect(paceLine({ burstMs: 60_000, perMinute: { requests: 588 } })).toBe(
      'Paced at 588 requests/min · bursts of the announced minute',
    )
    expect(paceLine({ burstMs: 1000, perMinute: { requests: 588.4 } })).toBe(
      'Paced at 588 requests/min · bursts of at most 1 s (learned: the provider refused inside a minute)',
    )
    expect(paceLine({ burstMs: 0, perMinute: { requests: 9800 } })).toBe(
      'Paced at 9,800 requests/min · one call at a time (learned)',
    )
  })

  it('says where a pace with no budget announced came from', () => {
    expect(paceLine({ burstMs: 0, perMinute: { requests: 42.4 }, learned: true })).toBe(
      'Paced at 42 requests/min · learned from refusals at one call in flight (no budget announced)',
    )
  })

  it('lists every dimension, requests first, tokens as the view formats tokens', () => {
    const line = paceLine({
      burstMs: 60_000,
      perMinute: { 'output-tokens': 8000, 'input-tokens': 400_000, requests: 50 },
    })
    expect(line).toBe(
      'Paced at 50 requests/min, 400,000 input tokens/min, 8,000 output tokens/min · bursts of the announced minute',
    )
  })

  it('keeps a fraction of a small rate, and says so when no dimension is known', () => {
    expect(paceLine({ burstMs: 60_000, perMinute: { requests: 2.5 } })).toMatch(
      /^Paced at 2\.5 requests\/min/,
    )
    expect(paceLine({ burstMs: 500, perMinute: {} })).toBe(
      'Paced by the announced budget · bursts of at most 500 ms (learned: the provider refused inside a minute)',
    )
  })
})

describe('why a pause happened', () => {
  it('drops the ISO time the view shows as a clock, keeps what the provider said', () => {
    const budget = '429 said wait 1000 ms: the announced budget is empty'
    expect(pauseWhy(pause('p', 0, 1_796_000_000_000, budget).reason)).toBe(budget)
    expect(
      pauseWhy(pause('p', 0, 1_796_000_000_000, 'refused at the floor: backing off').reason),
    ).toBe('refused at the floor: backing off')
    expect(pauseWhy('paused until 2026-12-02T05:51:37.493Z')).toBeNull()
    expect(pauseWhy(undefined)).toBeNull()
    // Another form is kept whole rather than cut wrong.
    expect(pauseWhy('team store paused admission')).toBe('team store paused admission')
  })

  it("lists the partition's last pauses, newest first, with their clock time, length and reason", () => {
    const pauses = [
      pause('p', 10_000, 10_091, '429 said wait 91 ms: refused again with no success between'),
      pause('q', 9_000, 12_000, 'other'),
      pause('p', 5_000, 6_500, 'refused at the floor: backing off'),
      pause('p', 3_000, 4_000),
      pause('p', 1_000, 2_000, 'oldest'),
    ]
    expect(recentPauses(pauses, 'p', 3)).toEqual([
      {
        key: '10000-10091',
        time: formatClock(10_000),
        length: '91 ms',
        why: '429 said wait 91 ms: refused again with no success between',
      },
      {
        key: '5000-6500',
        time: formatClock(5_000),
        length: '1.5 s',
        why: 'refused at the floor: backing off',
      },
      { key: '3000-4000', time: formatClock(3_000), length: '1 s', why: null },
    ])
  })

  it('titles the band under the pointer with its span and reason', () => {
    const pauses = [
      pause('p', 10_000, 20_000, 'first'),
      pause('p', 15_000, 30_000, '429 said wait 15000 ms: the announced budget is empty'),
      pause('q', 0, 100_000, 'other partition'),
    ]
    expect(pauseAt(pauses, 'p', 5_000)).toBeUndefined()
    expect(pauseAt(pauses, 'p', 12_000)?.reason).toMatch(/\(first\)$/)
    // Overlapping: the later pause is the one in force.
    const later = pauseAt(pauses, 'p', 16_000)!
    expect(pauseTitle(later)).toBe(
      `Paused ${formatClock(15_000)}–${formatClock(30_000)} (15 s): 429 said wait 15000 ms: the announced budget is empty`,
    )
    expect(pauseTitle(pause('p', 0, 400))).toBe(
      `Paused ${formatClock(0)}–${formatClock(400)} (400 ms)`,
    )
  })
})
