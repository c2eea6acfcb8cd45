// A cut of the announced pace's share stays one episode for half the partition's spacing when
// several workers send at the rate (episode-window.ts), on explicit clocks.
import { describe, expect, it } from 'vitest'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'
import { episodeWindowMs } from '../../../../src/main/engine/pacing/episode-window'

const ONE_CALL = costOf({}, 1)

/** 30 requests a minute, `workers` sending, narrowed to one call at a time and cut once at 3000. */
function cutOnce(workers: number): SendPace {
  const pace = new SendPace()
  pace.adopt(undefined, 0, workers)
  pace.announce('requests', 30 / 60_000, 0)
  pace.take(0, ONE_CALL)
  pace.refusedUnexplained(0, 10)
  // A call two seconds after the narrowing (one spacing of 30 a minute) is refused: the cut.
  pace.take(2000, ONE_CALL)
  pace.refusedUnexplained(2000, 3000)
  return pace
}

describe('episodeWindowMs', () => {
  it('is half the spacing one call at a time with several workers, none else', () => {
    expect(episodeWindowMs(0, 1 / 2000, 3)).toBe(1000)
    expect(episodeWindowMs(0, 1 / 2000, 1)).toBe(0)
    expect(episodeWindowMs(60_000, 1 / 2000, 3)).toBe(0)
    expect(episodeWindowMs(0, null, 3)).toBe(0)
  })
})

describe('SendPace: a cut with several workers', () => {
  it('is not cut again by a call another worker sent just after it', () => {
    const pace = cutOnce(3)
    expect(pace.learned().scale).toBeCloseTo(0.8, 5)
    // Another worker learned of the cut and sent its call 50 ms after it: the same episode.
    expect(pace.refusedUnexplained(3050, 3080)).toBe(true)
    expect(pace.learned().scale).toBeCloseTo(0.8, 5)
    expect(pace.learned().cutAt).toBe(3000)
    // A call a whole spacing later (30 a minute at 0.8 x 0.98: 2.55 s) is new evidence.
    expect(pace.refusedUnexplained(5600, 5620)).toBe(true)
    expect(pace.learned().scale).toBeCloseTo(0.64, 5)
  })

  it('alone, cuts again for any call sent after the cut, as before', () => {
    const pace = cutOnce(1)
    pace.refusedUnexplained(3050, 3080)
    expect(pace.learned().scale).toBeCloseTo(0.64, 5)
  })
})
