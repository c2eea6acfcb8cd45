// The calendar periods of spend caps: a day or a month in a time zone (UTC unless the operator
// asks for local time), or all time. Keys are the period's date as that zone writes it, so every
// process on the database, whatever its own zone, files a call under the same period.

/** Over how long a cap's spend adds up before it starts again. */
export type CapPeriod = 'total' | 'day' | 'month'

export const CAP_PERIODS: readonly CapPeriod[] = ['total', 'day', 'month']

const formats = new Map<string, Intl.DateTimeFormat>()

function formatOf(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    formats.set(zone, f)
  }
  return f
}

/** True when the runtime knows the IANA zone. */
export function isKnownZone(zone: string): boolean {
  try {
    formatOf(zone)
    return true
  } catch {
    return false
  }
}

/** The zone this process runs in (TZ, else the system's), as an IANA name. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
}

interface Wall {
  y: number
  mo: number
  d: number
  h: number
  mi: number
  s: number
}

function wallOf(ts: number, zone: string): Wall {
  const parts: Record<string, number> = {}
  for (const p of formatOf(zone).formatToParts(new Date(ts))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value)
  }
  const w = parts as Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number>
  return { y: w.year, mo: w.month, d: w.day, h: w.hour, mi: w.minute, s: w.second }
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** The key of the period `ts` falls in: '' for all time, '2026-12-02' for a day, '2026-12'. */
export function periodKey(ts: number, period: CapPeriod, zone: string): string {
  if (period === 'total') return ''
  const w = wallOf(ts, zone)
  const month = `${pad(w.y, 4)}-${pad(w.mo)}`
  return period === 'month' ? month : `${month}-${pad(w.d)}`
}

/** The instant a wall-clock time of the zone happens (the first, when a DST change repeats it). */
function instantOf(y: number, mo: number, d: number, zone: string): number {
  const asUtc = Date.UTC(y, mo - 1, d)
  // The zone's offset at a guess, applied twice: right on both sides of a DST change.
  let t = asUtc
  for (let i = 0; i < 2; i++) {
    const w = wallOf(t, zone)
    const offset = Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s) - Math.floor(t / 1000) * 1000
    t = asUtc - offset
  }
  return t
}

/** The period `ts` falls in as epoch ms [start, end); all time is [0, +∞). */
export function periodRange(
  ts: number,
  period: CapPeriod,
  zone: string,
): { key: string; start: number; end: number } {
  const key = periodKey(ts, period, zone)
  if (period === 'total') return { key, start: 0, end: Number.MAX_SAFE_INTEGER }
  const w = wallOf(ts, zone)
  if (period === 'month') {
    const start = instantOf(w.y, w.mo, 1, zone)
    const end = w.mo === 12 ? instantOf(w.y + 1, 1, 1, zone) : instantOf(w.y, w.mo + 1, 1, zone)
    return { key, start, end }
  }
  const next = new Date(Date.UTC(w.y, w.mo - 1, w.d + 1))
  const start = instantOf(w.y, w.mo, w.d, zone)
  const end = instantOf(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), zone)
  return { key, start, end }
}
