// The live line of a long pause: said once per pause, whatever stderr is, with the way out.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ANNOUNCED_PAUSE_MS, pauseAnnouncer } from '../../../src/main/cli/run-report'

const T0 = Date.UTC(2026, 0, 1)

function said(): string[] {
  const lines: string[] = []
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk))
    return true
  })
  return lines
}

const pause = (partition: string, ts: number, ms: number) => ({
  partition,
  ts,
  until: ts + ms,
  reason: `paused until ${new Date(ts + ms).toISOString()} (429 said wait ${ms} ms: x)`,
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('pauseAnnouncer', () => {
  it('says a pause of a minute or more in one line: partition, until when, Ctrl-C', () => {
    const lines = said()
    const announce = pauseAnnouncer()
    announce(pause('openai:m', T0, ANNOUNCED_PAUSE_MS - 1))
    expect(lines).toEqual([])
    announce(pause('openai:m', T0, 3_600_000))
    expect(lines).toEqual([
      '\npacer: openai:m paused until 2026-01-01T01:00:00.000Z (429 said wait 3600000 ms: x): waiting 1 h; Ctrl-C stops this run (the same command resumes it)\n',
    ])
  })

  it('a pause that grows while said is not said again; the next one, or another partition, is', () => {
    const lines = said()
    const announce = pauseAnnouncer()
    announce(pause('a', T0, 90_000))
    announce(pause('a', T0 + 10, 95_000))
    announce(pause('b', T0 + 20, 120_000))
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^\npacer: a paused until .*: waiting 90 s;/)
    expect(lines[1]).toMatch(/^\npacer: b paused until .*: waiting 2 min;/)
    // After a's pause (grown to T0 + 95 010) ended, a new one is news.
    announce(pause('a', T0 + 95_010, 5_400_000))
    expect(lines[2]).toMatch(/^\npacer: a paused until .*: waiting 1 h 30 min;/)
  })
})
