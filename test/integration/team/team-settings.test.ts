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

  it('pacer run without --store uses a confirmed setting: a server not there stops the start (exit 3)', async () => {
    const dir = tempDir()
    const dbPath = join(dir, 'p.db')
    const port = await freePort()
    // The desktop app's own window confirms what its Settings save.
    engine = createEngine({ dbPath, confirmsTeamStore: true })
    await engine.handlers['settings:set']({ teamStore: `redis://127.0.0.1:${port}/0` })
    await engine.shutdown({ graceMs: 0 })
    engine = undefined
    const file = writeJsonl(dir, 'b.jsonl', [{ type: 't', payload: { n: 1 } }])
    const r = await runPacer(['run', file, '--db', dbPath])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain(`team store 127.0.0.1:${port} unreachable`)
  })

  it('a store planted through a console (pacer serve) is not joined: its forged results are not reused, until a run is given it', async () => {
    redis = await startRedis()
    const dir = tempDir()
    const tasks = [1, 2, 3].map((n) => ({ type: 't', payload: { n } }))
    const file = writeJsonl(dir, 'b.jsonl', tasks)
    // The planter's machine fills the Redis with results for these very tasks.
    const planter = await runPacer([
      'run',
      file,
      '--db',
      join(dir, 'planter.db'),
      '--store',
      redis.url,
      '--json',
    ])
    expect(planter.code, planter.stderr).toBe(0)
    expect((JSON.parse(planter.stdout) as { executed: number }).executed).toBe(3)
    // The victim's database gets the URL through a console that confirms nothing (as pacer serve).
    const dbPath = join(dir, 'victim.db')
    engine = createEngine({ dbPath })
    await engine.handlers['settings:set']({ teamStore: redis.url })
    await engine.shutdown({ graceMs: 0 })
    engine = undefined
    const r = await runPacer(['run', file, '--db', dbPath, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stderr.split('\n').filter((l) => l.includes('teamStore setting'))
    expect(lines).toEqual([
      `pacer: the teamStore setting ${redis.url} was never confirmed on this machine (a console others may reach can store it), so it is ignored and this process paces on this machine alone; to use it, pass --store ${redis.url} (or set PACER_STORE), which also confirms it for later runs, or save it in the desktop app's Settings`,
    ])
    expect(r.stderr).not.toContain('team mode:')
    expect(JSON.parse(r.stdout)).toMatchObject({ executed: 3, reused: 0 })
    // Given once by the user, it is confirmed: the next run without --store joins it.
    const given = await runPacer(['run', file, '--db', dbPath, '--store', redis.url, '--json'])
    expect(given.code, given.stderr).toBe(0)
    const later = await runPacer([
      'run',
      writeJsonl(dir, 'c.jsonl', tasks),
      '--db',
      dbPath,
      '--json',
    ])
    expect(later.code, later.stderr).toBe(0)
    expect(later.stderr).toContain('team mode:')
    expect(later.stderr).not.toContain('never confirmed')
    // Saved again through the console, a different URL is unconfirmed again.
    engine = createEngine({ dbPath })
    await engine.handlers['settings:set']({ teamStore: `redis://127.0.0.1:${redis.port}/1` })
    await engine.shutdown({ graceMs: 0 })
    engine = undefined
    const moved = await runPacer(['run', writeJsonl(dir, 'd.jsonl', tasks), '--db', dbPath])
    expect(moved.code, moved.stderr).toBe(0)
    expect(moved.stderr).toContain('never confirmed')
    expect(moved.stderr).not.toContain('team mode:')
  })
})
