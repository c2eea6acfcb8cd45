// The background retries of a console process whose team store did not answer at its start, on
// fake timers (a real engine on a temp database; the store's connection is the seam): when they
// come, that they say nothing per attempt, and that "Try again now" tries at once and starts the
// backoff over. Joining itself, on a real redis-server: test/unit/desktop/open-engine.test.ts and
// test/integration/team-join.test.ts.
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { TeamStoreView } from '../../../../src/shared/contract'
import { createEngine, type Engine } from '../../../../src/main/engine/app/engine'
import { joinLater } from '../../../../src/main/engine/app/team-join'
import { TeamStoreUnreachable } from '../../../../src/main/engine/team/connect'
import { tempDir } from '../../../helpers/cli'

let engine: Engine | undefined
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
})
afterEach(async () => {
  vi.useRealTimers()
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
})

describe('a console process alone because its team store did not answer', () => {
  function alone(cause: () => string) {
    const t0 = Date.now()
    const attempts: number[] = []
    const lines: string[] = []
    const dbPath = join(tempDir('pacer-team-join-'), 'p.db')
    engine = joinLater('team store 127.0.0.1:1 unreachable: connect ECONNREFUSED', {
      connect: () => {
        attempts.push(Date.now() - t0)
        return Promise.reject(new TeamStoreUnreachable(cause()))
      },
      open: (extra) => createEngine({ dbPath, ...extra }),
      log: (line) => lines.push(line),
    })
    const told: TeamStoreView[] = []
    engine.subscribe('team:changed', (v) => told.push(v))
    const e = engine
    const view = async () => (await e.handlers['settings:get']({})).teamStore
    return { engine: e, attempts, lines, told, view }
  }

  it('tries again after 1 s, doubling to 30 s, and says nothing per attempt', async () => {
    const { attempts, lines, told, view } = alone(
      () => 'team store 127.0.0.1:1 unreachable: connect ECONNREFUSED',
    )
    await vi.advanceTimersByTimeAsync(999)
    expect(attempts).toEqual([])
    await vi.advanceTimersByTimeAsync(91_000 - 999)
    expect(attempts).toEqual([1000, 3000, 7000, 15_000, 31_000, 61_000, 91_000])
    await vi.advanceTimersByTimeAsync(29_999)
    expect(attempts).toHaveLength(7)
    expect(lines).toEqual([])
    expect(told).toEqual([])
    expect(await view()).toEqual({
      stored: null,
      active: null,
      problem: expect.stringMatching(
        /^team store 127\.0\.0\.1:1 unreachable: connect ECONNREFUSED; .*alone .*joins the team when the store answers/,
      ) as unknown,
    })
  })

  it('Settings shows the latest cause; Try again now tries at once and starts the backoff over', async () => {
    let cause = 'team store 127.0.0.1:1 unreachable: connect ECONNREFUSED'
    const { engine: e, attempts, told } = alone(() => cause)
    await vi.advanceTimersByTimeAsync(7000)
    expect(attempts).toEqual([1000, 3000, 7000])
    cause = 'team store 127.0.0.1:1 refused the login: WRONGPASS (check the password)'
    const now = await e.handlers['team:join']({})
    expect(attempts).toEqual([1000, 3000, 7000, 7000])
    expect(now.problem).toMatch(/^team store 127\.0\.0\.1:1 refused the login: WRONGPASS/)
    // One event for the change, none for an attempt that changes nothing.
    await vi.advanceTimersByTimeAsync(0)
    expect(told.map((v) => v.problem)).toEqual([now.problem])
    await vi.advanceTimersByTimeAsync(3000)
    expect(attempts).toEqual([1000, 3000, 7000, 7000, 8000, 10_000])
    expect(told).toHaveLength(1)
  })

  it('stops trying when the engine shuts down', async () => {
    const { engine: e, attempts } = alone(() => 'unreachable')
    await vi.advanceTimersByTimeAsync(1000)
    await e.shutdown({ graceMs: 0 })
    engine = undefined
    await vi.advanceTimersByTimeAsync(120_000)
    expect(attempts).toEqual([1000])
  })
})
