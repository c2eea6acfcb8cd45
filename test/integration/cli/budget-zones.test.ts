// A kept cap's days and months follow the zone it was set with (`--zone Area/City`, or
// `--local-time`: the zone of the process that sets it), stored with the cap, so every process
// files a call under the same day whatever its own TZ; `pacer budgets` shows the zone.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { query, runPacer, tempDir } from '../../helpers/cli'

/** Today's date as the zone writes it (yyyy-mm-dd). */
const today = (zone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, dateStyle: 'short' }).format(new Date())

describe('pacer budgets set --zone / --local-time', () => {
  it('stores the zone with the cap, lists its day in that zone, and refuses a zone it does not know', async () => {
    const db = join(tempDir('pacer-budget-zones-'), 'pacer.db')
    // UTC+14: its day differs from UTC's for 14 hours of every UTC day.
    const set = await runPacer([
      'budgets',
      'set',
      '5',
      '--daily',
      '--zone',
      'Pacific/Kiritimati',
      '--db',
      db,
    ])
    expect(set.code, set.stderr).toBe(0)
    expect(set.stderr).toContain('per day (Pacific/Kiritimati)')
    // --local-time takes the zone of the process that sets it, whatever the reader's.
    const local = await runPacer(['budgets', 'set', '7', '--monthly', '--local-time', '--db', db], {
      TZ: 'America/New_York',
    })
    expect(local.code, local.stderr).toBe(0)
    expect(query(db, 'SELECT id, period, zone FROM spend_caps ORDER BY id')).toEqual([
      { id: 1, period: 'day', zone: 'Pacific/Kiritimati' },
      { id: 2, period: 'month', zone: 'America/New_York' },
    ])
    const list = await runPacer(['budgets', '--db', db, '--json'], { TZ: 'Asia/Tokyo' })
    expect(list.code, list.stderr).toBe(0)
    const [day, month] = JSON.parse(list.stdout) as { periodKey: string; zone: string }[]
    expect(day!.periodKey).toBe(today('Pacific/Kiritimati'))
    expect(month!.periodKey).toBe(today('America/New_York').slice(0, 7))
    const table = await runPacer(['budgets', '--db', db])
    expect(table.stdout).toContain(`${today('Pacific/Kiritimati')} (Pacific/Kiritimati)`)
    expect(table.stdout).toContain(`${today('America/New_York').slice(0, 7)} (America/New_York)`)

    const bad = await runPacer([
      'budgets',
      'set',
      '5',
      '--daily',
      '--zone',
      'Mars/Olympus',
      '--db',
      db,
    ])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/zone: "Mars\/Olympus" is not a time zone this runtime knows/)
  }, 60_000)
})
