// Settings and tuning through the engine's command handlers, on a real database file.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ProviderId } from '../../../src/shared/contract'
import { createEngine, type Engine, type SecretsAccess } from '../../../src/main/engine/app/engine'
import { tempDir } from '../../helpers/cli'

let engine: Engine | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
})

const call = <T>(fn: () => T) => Promise.resolve().then(fn)

/** A vault like the desktop's, in memory: keys in (each for a base URL), hints out. */
function vault(): SecretsAccess & { keys: Map<ProviderId, { key: string; baseUrl?: string }> } {
  const keys = new Map<ProviderId, { key: string; baseUrl?: string }>()
  return {
    keys,
    keysFrom: 'store',
    available: true,
    reason: null,
    get: (p) => keys.get(p)?.key ?? null,
    storedFor: (p) => keys.get(p)?.baseUrl,
    set: (p, key, baseUrl) => {
      if (key === null) keys.delete(p)
      else keys.set(p, { key, baseUrl })
    },
  }
}

describe('engine settings', () => {
  it('a stored key stays bound to the base URL it was stored for: moved, the URL gets no key', async () => {
    const secrets = vault()
    engine = createEngine({ dbPath: join(tempDir(), 'p.db'), secrets })
    await engine.handlers['secrets:set']({
      provider: 'openai',
      apiKey: 'sk-test-0123456789abcdefXYZ',
    })
    const view = await engine.handlers['settings:get']({})
    expect(view.providers.openai).toMatchObject({ hasKey: true, keyHint: '…fXYZ' })
    expect(JSON.stringify(view)).not.toContain('sk-test')

    expect(secrets.keys.get('openai')?.baseUrl).toBe('https://api.openai.com/v1')
    expect(view.providers.openai).toMatchObject({
      keyFrom: 'store',
      keyBaseUrl: 'https://api.openai.com/v1',
      effectiveBaseUrl: 'https://api.openai.com/v1',
      baseUrlFrom: 'default',
      keyRefusal: null,
    })

    // Another server: the key stays stored, bound to the first URL, and is not sent to this one.
    const moved = await engine.handlers['settings:set']({
      baseUrls: { openai: 'https://proxy.example.com/v1' },
    })
    expect(moved.providers.openai).toMatchObject({
      hasKey: true,
      baseUrl: 'https://proxy.example.com/v1',
      effectiveBaseUrl: 'https://proxy.example.com/v1',
      baseUrlFrom: 'settings',
      keyBaseUrl: 'https://api.openai.com/v1',
    })
    expect(moved.providers.openai.keyRefusal).toBe(
      'openai: the API key in Settings was stored for https://api.openai.com/v1, so it is not sent to https://proxy.example.com/v1; store the key again in Settings while the base URL is https://proxy.example.com/v1, or set the base URL back',
    )
    // Storing it again while the proxy is set binds it there; the default then gets none.
    await engine.handlers['secrets:set']({ provider: 'openai', apiKey: 'sk-proxy-0123456789abcd' })
    expect(secrets.keys.get('openai')?.baseUrl).toBe('https://proxy.example.com/v1')
    const back = await engine.handlers['settings:set']({ baseUrls: { openai: null } })
    expect(back.providers.openai.keyRefusal).toContain(
      'was stored for https://proxy.example.com/v1',
    )
  })

  it('a key from the environment pins its provider’s base URL', async () => {
    engine = createEngine({
      dbPath: join(tempDir(), 'p.db'),
      secrets: {
        keysFrom: 'environment',
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
