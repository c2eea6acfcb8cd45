// The desktop's engine opening (the function desktop/index.ts calls; Electron itself cannot be
// launched here): team mode from the database's teamStore setting or $PACER_STORE on a real
// redis-server, and a store that does not answer or a wrong URL opening the app on its own, with
// Settings saying why.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../src/main/engine/db'
import type { Engine } from '../../../src/main/engine/app/engine'
import { SettingsStore } from '../../../src/main/engine/settings/settings'
import { openDesktopEngine } from '../../../src/main/desktop/open-engine'
import { tempDir, until } from '../../helpers/cli'
import { freePort, startRedis, type RedisServer } from '../../helpers/redis'

const engines: Engine[] = []
const servers: RedisServer[] = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.shutdown()
  await Promise.all(servers.splice(0).map((r) => r.close()))
})

/**
 * A database whose Settings name this team store, as the desktop's Team mode section saves it
 * (confirmed), or as `pacer serve`'s console does (not).
 */
function databaseWith(teamStore: string | null, confirmed = true): string {
  const dbPath = join(tempDir('pacer-desktop-team-'), 'pacer.db')
  const db = openDatabase(dbPath)
  const settings = new SettingsStore(db)
  settings.set({ teamStore })
  if (confirmed) settings.confirmTeamStore(teamStore)
  db.close()
  return dbPath
}

async function open(dbPath: string, env: NodeJS.ProcessEnv = {}) {
  const lines: string[] = []
  const engine = await openDesktopEngine(
    { dbPath },
    { env, log: (line) => lines.push(line), connectTimeoutMs: 2000, retryDelayMs: 50 },
  )
  engines.push(engine)
  const view = async () => (await engine.handlers['settings:get']({})).teamStore
  return { engine, lines, view }
}

describe('the desktop opens its engine in team mode when the setting is set', () => {
  it('no store set: the engine paces on this machine, and says nothing of team mode', async () => {
    const { view, lines } = await open(databaseWith(null))
    expect(await view()).toEqual({ stored: null, active: null, problem: null })
    expect(lines).toEqual([])
  })

  it('the teamStore setting names a Redis that answers: team mode, shown active in Settings', async () => {
    const redis = await startRedis()
    servers.push(redis)
    const { view, lines } = await open(databaseWith(redis.url))
    expect(await view()).toEqual({ stored: redis.url, active: redis.url, problem: null })
    expect(lines).toEqual([expect.stringContaining(`shared through ${redis.url}`)])
    // The store goes away while the app runs: Settings says admission waits for it, and when
    // it is back, that it answers again.
    await redis.stop()
    await until(async () => ((await view()).problem ?? '').includes('unreachable') || undefined)
    expect((await view()).problem).toMatch(/admission paused until it answers/)
    await redis.start()
    await until(async () => (await view()).problem === null || undefined)
    expect(lines.at(-1)).toMatch(/answers again/)
  })

  it('a store that does not answer: the app opens on its own and Settings says why', async () => {
    const url = `redis://127.0.0.1:${await freePort()}/0`
    const { view, lines } = await open(databaseWith(url))
    const shown = await view()
    expect(shown).toMatchObject({ stored: url, active: null })
    expect(shown.problem).toMatch(/unreachable: connect ECONNREFUSED.*on this machine alone/)
    expect(lines).toEqual([shown.problem])
  })

  it('a store that answers later: the app joins its team without a restart, its listeners kept', async () => {
    const redis = await startRedis()
    servers.push(redis)
    await redis.stop()
    const { engine, view, lines } = await open(databaseWith(redis.url))
    const told: unknown[] = []
    engine.subscribe('team:changed', (v) => told.push(v))
    const batches: string[][] = []
    engine.subscribe('tasks:changed', (e) => batches.push(e.batches.map((b) => b.state)))
    engine.start()
    expect((await view()).active).toBeNull()
    await redis.start()
    await until(async () => (await view()).active === redis.url || undefined)
    const joined = { stored: redis.url, active: redis.url, problem: null }
    expect(await view()).toEqual(joined)
    await until(() => told.length > 0 || undefined)
    expect(told).toEqual([joined])
    expect(lines).toEqual([
      expect.stringMatching(
        /unreachable: connect ECONNREFUSED.*joins the team when the store answers/,
      ),
      expect.stringMatching(/answers: team mode: the provider budget and the claims are shared/),
    ])
    // The window's event forwarding and the started runner carry over to the reopened engine.
    await engine.handlers['tasks:enqueue']({ tasks: [{ type: 't', payload: { n: 1 } }] })
    await until(() => batches.some((states) => states.includes('done')) || undefined)
  })

  it('a store saved through a console that confirms nothing is not joined until saved here', async () => {
    const redis = await startRedis()
    servers.push(redis)
    const dbPath = databaseWith(redis.url, false)
    const first = await open(dbPath)
    const shown = await first.view()
    expect(shown).toMatchObject({ stored: redis.url, active: null })
    expect(shown.problem).toMatch(/^the teamStore setting .* was never confirmed on this machine/)
    expect(first.lines).toEqual([shown.problem])
    // Saved in this window's Settings, it is the user's choice: the next start joins it.
    await first.engine.handlers['settings:set']({ teamStore: redis.url })
    await first.engine.shutdown()
    const second = await open(dbPath)
    expect(await second.view()).toEqual({ stored: redis.url, active: redis.url, problem: null })
  })

  it('$PACER_STORE wins over the setting; a wrong URL there opens the app on its own too', async () => {
    const { view } = await open(databaseWith(null), { PACER_STORE: 'http://10.0.0.5:6379' })
    expect((await view()).problem).toMatch(/^PACER_STORE: scheme "http:" is not redis:/)
  })
})
