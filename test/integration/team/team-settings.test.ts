// Team mode's Settings field through the engine's handlers, on a real database file and a real
// redis-server: the URL is checked, stored without a password, and the process's store is shown
// with its password masked.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import { connectTeamStore } from '../../../src/main/engine/team/connect'
import { parseStoreUrl } from '../../../src/main/engine/team/store-url'
import { runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { freePort, startRedis, type RedisServer } from '../../helpers/redis'

let engine: Engine | undefined
let redis: RedisServer | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
  await redis?.close()
  redis = undefined
})

describe('the teamStore setting', () => {
  it('is checked, kept without a password, and shown beside the store this process uses (masked)', async () => {
    redis = await startRedis({ password: 'pw-9f8e7d' })
    const address = parseStoreUrl(redis.url, '--store', 'pw-9f8e7d')
    const team = await connectTeamStore(address)
    const dbPath = join(tempDir(), 'p.db')
    engine = createEngine({ dbPath, team })
    const set = engine.handlers['settings:set']
    expect((await set({})).teamStore).toEqual({
      stored: null,
      active: `redis://:***@127.0.0.1:${redis.port}/0`,
      problem: null,
    })
    await expect(
      Promise.resolve().then(() => set({ teamStore: 'http://x' })),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'teamStore',
      message: expect.stringMatching(/^teamStore: scheme "http:"/) as unknown,
    })
    await expect(
      Promise.resolve().then(() => set({ teamStore: 'redis://:pw-9f8e7d@h:1/0' })),
    ).rejects.toMatchObject({
      field: 'teamStore',
      message: expect.stringMatching(/PACER_REDIS_PASSWORD/) as unknown,
    })
    const view = await set({ teamStore: ' redis://cache.local ' })
    expect(view.teamStore.stored).toBe('redis://cache.local/0')
    expect((await set({ teamStore: null })).teamStore.stored).toBeNull()
    await engine.shutdown({ graceMs: 0 })
    engine = undefined
    expect(readFileSync(dbPath).includes('pw-9f8e7d')).toBe(false)
  })

  it('pacer run started without --store uses it: a server not there stops the start (exit 3)', async () => {
    const dir = tempDir()
    const dbPath = join(dir, 'p.db')
    const port = await freePort()
    engine = createEngine({ dbPath })
    await engine.handlers['settings:set']({ teamStore: `redis://127.0.0.1:${port}/0` })
    await engine.shutdown({ graceMs: 0 })
    engine = undefined
    const file = writeJsonl(dir, 'b.jsonl', [{ type: 't', payload: { n: 1 } }])
    const r = await runPacer(['run', file, '--db', dbPath])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain(`team store 127.0.0.1:${port} unreachable`)
  })
})
