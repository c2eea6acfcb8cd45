// --batch-api auto's choice and --deadline's reading, as pure functions.
import { describe, expect, it } from 'vitest'
import {
  BATCH_WINDOW_MS,
  checkDeadline,
  chooseRoute,
  parseDeadline,
  type RouteInput,
} from '../../../src/main/cli/batch-route'

const NOW = Date.parse('2026-12-02T12:00:00Z')
const HOUR = 3_600_000

describe('parseDeadline', () => {
  it('reads durations and ISO times', () => {
    expect(parseDeadline('2h', NOW)).toBe(NOW + 2 * HOUR)
    expect(parseDeadline('1h30m', NOW)).toBe(NOW + 1.5 * HOUR)
    expect(parseDeadline('2d', NOW)).toBe(NOW + 48 * HOUR)
    expect(parseDeadline('45s', NOW)).toBe(NOW + 45_000)
    expect(parseDeadline('2026-12-03T09:00Z', NOW)).toBe(Date.parse('2026-12-03T09:00Z'))
    expect(parseDeadline('2026-12-04', NOW)).toBe(Date.parse('2026-12-04T00:00Z'))
  })
  it('refuses what it cannot read, and a time that has passed', () => {
    expect(() => parseDeadline('soon', NOW)).toThrow(/duration .* or an ISO time.*"soon"/)
    expect(() => parseDeadline('0h', NOW)).toThrow(/after now/)
    expect(() => parseDeadline('2026-12-01T00:00Z', NOW)).toThrow(/has passed/)
  })
})

describe('checkDeadline (plain --batch-api)', () => {
  it('refuses a deadline inside the 24 h window, accepts one at or past it, or none', () => {
    expect(() => checkDeadline(NOW + 2 * HOUR, NOW)).toThrow(/in 2 h, inside .*24 h/)
    expect(() => checkDeadline(NOW + BATCH_WINDOW_MS, NOW)).not.toThrow()
    expect(() => checkDeadline(null, NOW)).not.toThrow()
  })
})

describe('chooseRoute (--batch-api auto)', () => {
  const base: RouteInput = {
    provider: 'openai',
    deadline: null,
    now: NOW,
    listMicros: 10_000_000,
    unpricedTasks: 0,
    minSavingMicros: 1_000_000,
    openSubmissions: 0,
  }
  it('the batch API when the saving is above the threshold and no deadline forbids it', () => {
    expect(chooseRoute(base)).toEqual({
      batch: true,
      reason: 'the forecast saving $5.0000 is above $1.0000 (--batch-min-saving), no --deadline',
    })
    expect(chooseRoute({ ...base, deadline: NOW + 30 * HOUR }).batch).toBe(true)
  })
  it('live when the saving is not above it', () => {
    const r = chooseRoute({ ...base, listMicros: 2_000_000 })
    expect(r).toEqual({
      batch: false,
      reason: 'the forecast saving $1.0000 is not above $1.0000 (--batch-min-saving)',
    })
  })
  it('live when the deadline is inside the window, however large the saving', () => {
    const r = chooseRoute({ ...base, listMicros: 1e12, deadline: NOW + 2 * HOUR })
    expect(r.batch).toBe(false)
    expect(r.reason).toMatch(/deadline is in 2 h, inside the 24 h completion window/)
  })
  it('live on a provider without batches, or when the saving cannot be priced', () => {
    expect(chooseRoute({ ...base, provider: 'sim' })).toEqual({
      batch: false,
      reason: 'sim has no batch API',
    })
    expect(chooseRoute({ ...base, listMicros: 0, unpricedTasks: 3 }).reason).toMatch(/no price/)
  })
  it('the batch API while an earlier run’s provider batches are open, even with a deadline', () => {
    const r = chooseRoute({ ...base, listMicros: 0, deadline: NOW + HOUR, openSubmissions: 2 })
    expect(r.batch).toBe(true)
    expect(r.reason).toMatch(/2 provider batch\(es\) of an earlier run are still open/)
  })
})
