// The team ledger as the engine wires it: an engine in team mode appends its rows (and the last
// ones at shutdown, before its connection closes), `ledger:team` reads the team's, and an engine
// without a team store says so instead of showing this machine's ledger as the team's.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createEngine } from '../../../../../src/main/engine/app/engine'
import type { TeamLedgerBacklog } from '../../../../../src/shared/contract'
import { connectTeamStore } from '../../../../../src/main/engine/team/connect'
import { LedgerAppender } from '../../../../../src/main/engine/team/ledger/appender'
import { parseStoreUrl } from '../../../../../src/main/engine/team/store-url'
import { tempDir } from '../../../../helpers/cli'
import { startRedis, type RedisServer } from '../../../../helpers/redis'
import { recordRows } from '../../../../helpers/team-ledger'
import { until } from '../../../../helpers/until'

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis.close()
})

const connect = (prefix: string) => connectTeamStore(parseStoreUrl(redis.url, 'test'), { prefix })

describe('the engine in team mode', () => {
  it('appends its rows, the last ones at shutdown; ledger:team shows them with the machine', async () => {
    const prefix = `t${randomBytes(4).toString('hex')}:`
    const before = process.env.PACER_MACHINE
    process.env.PACER_MACHINE = 'desk-7'
    try {
      const engine = createEngine({
        dbPath: join(tempDir('pacer-team-engine-'), 'p.db'),
        team: await connect(prefix),
      })
      recordRows(engine.db, 120, 3)
      const view = await until(async () => {
        const v = await engine.handlers['ledger:team']({})
        return v.rows === 120 ? v : undefined
      })
      expect(view.machines).toEqual(['desk-7'])
      expect(view.waiting).toBe(0)
      expect(view.totals.runs).toBe((await engine.handlers['ledger:rollup']({})).totals.runs)
      // Rows written just before the end go out with the shutdown.
      recordRows(engine.db, 30, 4)
      await engine.shutdown({ graceMs: 0 })
      const reader = await connect(prefix)
      expect(await reader.ledger.length()).toBe(150)
      await reader.close()
    } finally {
      if (before === undefined) delete process.env.PACER_MACHINE
      else process.env.PACER_MACHINE = before
    }
  })

  it('Redis stopped: the rows waiting and since when, in Settings and as team:changed; gone once it answers again', async () => {
    const own = await startRedis()
    const engine = createEngine({
      dbPath: join(tempDir('pacer-team-backlog-'), 'p.db'),
      team: await connectTeamStore(parseStoreUrl(own.url, 'test'), {}),
    })
    const pushed: (TeamLedgerBacklog | null)[] = []
    const off = engine.subscribe('team:changed', (e) => pushed.push(e.ledgerBacklog ?? null))
    const shown = async () => (await engine.handlers['settings:get']({})).teamStore.ledgerBacklog
    try {
      recordRows(engine.db, 20, 5)
      await until(async () => (await engine.handlers['ledger:team']({})).rows === 20)
      // Everything in: nothing waits, nothing to say.
      expect(await shown()).toBeUndefined()
      const stoppedAt = Date.now()
      await own.stop()
      recordRows(engine.db, 35, 6)
      const backlog = await until(() => {
        const last = pushed.at(-1)
        return last?.rows === 35 ? last : undefined
      })
      expect(backlog.since).toBeGreaterThanOrEqual(stoppedAt)
      expect(backlog.since).toBeLessThanOrEqual(Date.now())
      expect(await shown()).toEqual(backlog)
      // The same rows and time while it stays away: pushed when they move, not every flush.
      const before = pushed.length
      const flushes = vi.spyOn(LedgerAppender.prototype, 'flush')
      await until(() => flushes.mock.calls.length >= 3)
      flushes.mockRestore()
      expect(pushed.length).toBe(before)
      // Back (empty: no persistence): every row goes again, and the backlog is gone.
      await own.start()
      await until(() => pushed.at(-1) === null)
      expect(await shown()).toBeUndefined()
      expect((await engine.handlers['ledger:team']({})).rows).toBe(55)
      expect(pushed.filter((b) => b === null)).toHaveLength(1)
    } finally {
      off()
      await engine.shutdown({ graceMs: 0 })
      await own.close()
    }
  })

  it('without a team store, the team ledger is refused by name; with one, an export takes no filter', async () => {
    const alone = createEngine({ dbPath: join(tempDir('pacer-team-engine-'), 'p.db') })
    try {
      await expect(alone.handlers['ledger:team']({})).rejects.toMatchObject({
        code: 'no_team_store',
      })
      await expect(alone.exportCsv('events', new PassThrough(), {}, 'team')).rejects.toMatchObject({
        code: 'no_team_store',
      })
    } finally {
      await alone.shutdown({ graceMs: 0 })
    }
    const teamed = createEngine({
      dbPath: join(tempDir('pacer-team-engine-'), 'p.db'),
      team: await connect(`t${randomBytes(4).toString('hex')}:`),
    })
    try {
      await expect(
        teamed.exportCsv('events', new PassThrough(), { since: 5 }, 'team'),
      ).rejects.toMatchObject({ code: 'invalid_input', field: 'scope' })
    } finally {
      await teamed.shutdown({ graceMs: 0 })
    }
  })
})
