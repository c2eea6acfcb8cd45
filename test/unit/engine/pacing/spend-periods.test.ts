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

  it('files the hours around a DST change under the right local day (New York, spring and autumn)', () => {
    // 2027-03-14: clocks go from 02:00 EST to 03:00 EDT; the day is 23 hours, from 05:00Z to 04:00Z.
    const spring = periodRange(at('2027-03-14T12:00:00Z'), 'day', 'America/New_York')
    expect(spring).toEqual({
      key: '2027-03-14',
      start: at('2027-03-14T05:00:00Z'),
      end: at('2027-03-15T04:00:00Z'),
    })
    expect(periodKey(at('2027-03-14T04:59:59Z'), 'day', 'America/New_York')).toBe('2027-03-13')
    expect(periodKey(at('2027-03-15T03:59:59Z'), 'day', 'America/New_York')).toBe('2027-03-14')
    expect(periodKey(at('2027-03-15T04:00:00Z'), 'day', 'America/New_York')).toBe('2027-03-15')
    // 2027-11-07: 02:00 EDT back to 01:00 EST; 25 hours, and the month's end in EST.
    const autumn = periodRange(at('2027-11-07T12:00:00Z'), 'day', 'America/New_York')
    expect(autumn).toEqual({
      key: '2027-11-07',
      start: at('2027-11-07T04:00:00Z'),
      end: at('2027-11-08T05:00:00Z'),
    })
    expect(periodRange(at('2027-11-07T12:00:00Z'), 'month', 'America/New_York')).toEqual({
      key: '2027-11',
      start: at('2027-11-01T04:00:00Z'),
      end: at('2027-12-01T05:00:00Z'),
    })
  })

  it('knows IANA zones and refuses others', () => {
    expect(isKnownZone('Asia/Tokyo')).toBe(true)
    expect(isKnownZone('Mars/Olympus')).toBe(false)
  })
})
