// The window a provider enforces, as the announced bucket shows it (enforced-window.ts): what it
// was short of at a refusal, how a limit that moves is carried, and the room it lends.
import { describe, expect, it } from 'vitest'
import { EnforcedWindow, type RoomInputs } from '../../../../src/main/engine/pacing/enforced-window'

const MINUTE = 60_000
/** A window of ten seconds of a limit of 600 a minute: 100 requests. */
const TEN_S = 10_000

const reading = (limit: number, remaining: number) => ({ limit, remaining })

/** Reads `remaining` at `at`, the model having predicted `predicted` (null: nothing to compare). */
function read(
  w: EnforcedWindow,
  limit: number,
  remaining: number,
  at: number,
  sent: number,
  predicted: number | null = null,
  level = remaining,
  windowMs = TEN_S,
) {
  w.read('requests', reading(limit, remaining), {
    sentAt: at,
    sent,
    windowMs,
    announcedMs: MINUTE,
    predicted,
    level,
  })
}

const inputs = (over: Partial<RoomInputs> = {}): RoomInputs => ({
  windowMs: TEN_S,
  announcedMs: MINUTE,
  ours: 1,
  single: 1,
  samples: 10,
  sent: 0,
  ...over,
})

describe('EnforcedWindow: what the window was short of', () => {
  it('is what the announced bucket was short of, once both were full', () => {
    const w = new EnforcedWindow()
    read(w, 600, 600, 0, 0)
    expect(w.shortAt('requests', reading(600, 510))).toBe(90)
  })

  it('keeps what the window held when the limit rises: only its burst grows', () => {
    const w = new EnforcedWindow()
    // 600 a minute, the window of 100 short of 90: it holds 10.
    read(w, 600, 510, 0, 0)
    // 1,200 a minute: the announced bucket is short of 690, the window (now 200) still holds 10.
    read(w, 1200, 510, 100, 0)
    expect(w.shortAt('requests', reading(1200, 510))).toBe(190)
    // The window refills as the bucket does: 100 later, both are short of 100 less.
    expect(w.shortAt('requests', reading(1200, 610))).toBe(90)
  })

  it('keeps what it held when the limit falls, though the announced bucket shows it full', () => {
    const w = new EnforcedWindow()
    // 1,200 a minute, the window of 200 short of 190: it holds 10.
    read(w, 1200, 1010, 0, 0)
    // 300 a minute: `remaining` is clipped to the new limit (nothing short), the window of 50
    // still holds its 10: short of 40, fuller than the announced bucket shows.
    read(w, 300, 300, 100, 0)
    expect(w.shortAt('requests', reading(300, 300))).toBe(40)
  })
})

describe('EnforcedWindow: room lent', () => {
  it('the window less what it is short of, less five errors of the model', () => {
    const w = new EnforcedWindow()
    read(w, 600, 560, 0, 0)
    // The model was 2 off the next reading: an error of 2.
    read(w, 600, 560, 1000, 10, 562, 560)
    // Short of 40 as of the reading, 10 refilled since (a second at 600 a minute), 5 sent since.
    const room = w.room('requests', 2000, inputs({ sent: 15 }))
    expect(room).toBeCloseTo(100 - (40 - 10 + 5) - 5 * 2, 6)
  })

  it('refills at the share that is ours, not the announced rate', () => {
    const w = new EnforcedWindow()
    read(w, 600, 560, 0, 0)
    read(w, 600, 560, 1000, 10, 560, 560)
    expect(w.room('requests', 2000, inputs({ sent: 10, ours: 0.5 }))).toBeCloseTo(100 - 35, 6)
  })

  it('lends nothing until it can be trusted', () => {
    const w = new EnforcedWindow()
    read(w, 600, 560, 0, 0)
    // No error measured yet: one reading.
    expect(w.room('requests', 1000, inputs())).toBeNull()
    read(w, 600, 560, 1000, 10, 560, 560)
    expect(w.room('requests', 1000, inputs())).not.toBeNull()
    // Too few estimates of what others spend behind the rate that is ours.
    expect(w.room('requests', 1000, inputs({ samples: 4 }))).toBeNull()
    // A window of less than four calls (here a second of the rate: 10 calls of 3).
    expect(w.room('requests', 1000, inputs({ windowMs: 1000, single: 3 }))).toBeNull()
  })
})
