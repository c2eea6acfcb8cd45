// The window a refusal narrows the learned one to: never below one mean call (window-floor.ts),
// alone and through the pace (explicit clocks: SendPace is pure).
import { describe, expect, it } from 'vitest'
import { narrowedWindow } from '../../../../src/main/engine/pacing/window-floor'
import { SendPace } from '../../../../src/main/engine/pacing/send-pace'
import { costOf } from '../../../../src/main/engine/pacing/budget-reading'

describe('narrowedWindow', () => {
  it('narrows to the reading, never below one call, never wider', () => {
    expect(narrowedWindow(60_000, 900, 400)).toBe(900)
    expect(narrowedWindow(900, 0, 400)).toBe(400)
    expect(narrowedWindow(900, 100, 400)).toBe(400)
    expect(narrowedWindow(300, 0, 400)).toBe(300)
    expect(narrowedWindow(900, 2000, 400)).toBe(900)
    expect(narrowedWindow(900, undefined, 400)).toBe(900)
  })
})

describe('SendPace: a refusal read as an empty window', () => {
  it('keeps a window of one mean call, not 0 ms (#100004: a refusal just after the limit fell)', () => {
    const pace = new SendPace()
    // 60,000 tokens a minute: one a ms; calls of 500 tokens.
    pace.announce('tokens', 1, 0)
    const call = { ...costOf({}, 1), tokens: 500 }
    pace.refusedUnexplained(1, 2, 900)
    expect(pace.windowMs).toBe(900)
    for (let i = 0; i < 20; i++) pace.take(10_000 + i * 1000, call)
    // A later episode's refusal where the minute bucket lacked nothing.
    pace.refusedUnexplained(40_000, 40_001, 0)
    expect(pace.windowMs).toBe(500)
  })
})
