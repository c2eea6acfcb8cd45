// The calendar periods of kept caps: a day or month of the cap's zone, the same key in every
// process whatever its own zone, with DST days 23 or 25 hours long.
import { describe, expect, it } from 'vitest'
import {
  isKnownZone,
  periodKey,
  periodRange,
} from '../../../../src/main/engine/pacing/spend-periods'

const at = (iso: string) => Date.parse(iso)

describe('spend cap periods', () => {
  it('files an instant under the day and month of the zone, not of the process', () => {
    const t = at('2026-12-31T23:30:00Z')
    expect(periodKey(t, 'day', 'UTC')).toBe('2026-12-31')
    expect(periodKey(t, 'day', 'Europe/Paris')).toBe('2027-01-01')
    expect(periodKey(t, 'month', 'Europe/Paris')).toBe('2027-01')
    expect(periodKey(t, 'day', 'America/New_York')).toBe('2026-12-31')
    expect(periodKey(t, 'total', 'Europe/Paris')).toBe('')
  })

  it('gives a day its instants, 23 hours on the spring DST change and 25 in the autumn', () => {
    expect(periodRange(at('2026-03-29T12:00:00Z'), 'day', 'Europe/Paris')).toEqual({
      key: '2026-03-29',
      start: at('2026-03-28T23:00:00Z'),
      end: at('2026-03-29T22:00:00Z'),
    })
    const autumn = periodRange(at('2026-10-25T12:00:00Z'), 'day', 'Europe/Paris')
    expect(autumn.end - autumn.start).toBe(25 * 3_600_000)
    expect(periodRange(at('2026-12-15T00:00:00Z'), 'month', 'UTC')).toEqual({
      key: '2026-12',
      start: at('2026-12-01T00:00:00Z'),
      end: at('2027-01-01T00:00:00Z'),
    })
  })

  it('knows IANA zones and refuses others', () => {
    expect(isKnownZone('Asia/Tokyo')).toBe(true)
    expect(isKnownZone('Mars/Olympus')).toBe(false)
  })
})
