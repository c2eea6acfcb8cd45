// Settings and tuning through the engine's command handlers, on a real database file.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ProviderId } from '../../src/shared/contract'
import { createEngine, type Engine, type SecretsAccess } from '../../src/main/engine/engine'
import { tempDir } from '../helpers/cli'

let engine: Engine | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
})

const call = <T>(fn: () => T) => Promise.resolve().then(fn)

/** A vault like the desktop's, in memory: keys in, hints out. */
function vault(): SecretsAccess & { keys: Map<ProviderId, string> } {
  const keys = new Map<ProviderId, string>()
  return {
    keys,
    available: true,
    reason: null,
    get: (p) => keys.get(p) ?? null,
    set: (p, k) => (k === null ? keys.delete(p) : keys.set(p, k)) && undefined,
  }
}

describe('engine settings', () => {
  it('moving a keyed provider to another server removes its stored key', async () => {
    const secrets = vault()
    engine = createEngine({ dbPath: join(tempDir(), 'p.db'), secrets })
    await engine.handlers['secrets:set']({
      provider: 'openai',
      apiKey: 'sk-test-0123456789abcdefXYZ',
    })
    const view = await engine.handlers['settings:get']({})
    expect(view.providers.openai).toMatchObject({ hasKey: true, keyHint: '…fXYZ' })
    expect(JSON.stringify(view)).not.toContain('sk-test')

    // Same origin, another path: the key stays.
    await engine.handlers['settings:set']({ baseUrls: { openai: 'https://api.openai.com/v2' } })
    expect(secrets.keys.has('openai')).toBe(true)
    // Another origin: the key does not follow.
    const moved = await engine.handlers['settings:set']({
      baseUrls: { openai: 'https://proxy.example.com/v1' },
    })
    expect(secrets.keys.has('openai')).toBe(false)
    expect(moved.providers.openai).toMatchObject({
      hasKey: false,
      baseUrl: 'https://proxy.example.com/v1',
    })
  })

  it('a key from the environment pins its provider’s base URL', async () => {
    engine = createEngine({
      dbPath: join(tempDir(), 'p.db'),
      secrets: {
        available: false,
        reason: 'headless',
        get: (p) => (p === 'anthropic' ? 'sk-ant-env-key-000000' : null),
      },
    })
    await expect(
      call(() =>
        engine!.handlers['settings:set']({ baseUrls: { anthropic: 'https://elsewhere.example' } }),
      ),
    ).rejects.toMatchObject({ code: 'base_url_locked', field: 'baseUrls.anthropic' })
    // Providers without a key can still be pointed anywhere allowed.
    await engine.handlers['settings:set']({
      baseUrls: { 'openai-compatible': 'http://127.0.0.1:9000/v1' },
    })
    // And storing keys is refused with the reason, while removing one is allowed.
    await expect(
      call(() => engine!.handlers['secrets:set']({ provider: 'openai', apiKey: 'x'.repeat(30) })),
    ).rejects.toMatchObject({ code: 'secret_storage_unavailable' })
  })

  it('scheduler tuning applies to existing partitions or all of them', async () => {
    engine = createEngine({ dbPath: join(tempDir(), 'p.db') })
    await expect(
      call(() => engine!.handlers['scheduler:set']({ partition: 'made:up', params: { max: 3 } })),
    ).rejects.toMatchObject({ code: 'not_found', field: 'partition' })
    await engine.handlers['scheduler:set']({ partition: '*', params: { max: 5 } })
    const permit = await engine.scheduler.acquire('sim:sim-small')
    permit.release('ok')
    const parts = await engine.handlers['scheduler:set']({
      partition: 'sim:sim-small',
      params: { max: 4 },
    })
    expect(parts.find((p) => p.partition === 'sim:sim-small')!.params.max).toBe(4)
  })
})

describe('reusing truncated answers', () => {
  it('is a stored setting the running claims follow; the engine option overrides it', async () => {
    const dbPath = join(tempDir(), 'p.db')
    engine = createEngine({ dbPath })
    expect((await engine.handlers['settings:get']({})).acceptTruncated).toBe(false)
    const view = await engine.handlers['settings:set']({ acceptTruncated: true })
    expect(view.acceptTruncated).toBe(true)
    expect(engine.claims.acceptTruncated).toBe(true)
    await engine.shutdown({ graceMs: 0 })
    engine = createEngine({ dbPath })
    expect(engine.claims.acceptTruncated).toBe(true)
    await engine.shutdown({ graceMs: 0 })
    // `pacer run` without --accept-truncated passes nothing: the setting holds; false overrides.
    engine = createEngine({ dbPath, acceptTruncated: false })
    expect(engine.claims.acceptTruncated).toBe(false)
  })
})
