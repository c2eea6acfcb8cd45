// Settings → Observability through the engine's handlers, as the desktop app runs them: a real
// database, the secrets file with a keyring stand-in, real loopback OTLP receivers. Headers stored
// there are encrypted, never in the database or the view, sent only to the endpoint they were
// stored for; Test says what the collector answered; a console batch arrives as one trace.
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSecretStore, type SafeStorageLike } from '../../../src/main/desktop/secrets'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import { envSecrets } from '../../../src/main/engine/app/secrets'
import { tempDir, until } from '../../helpers/cli'
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver'

const SECRET = 'c3RvcmVkLWhlYWRlci1zZWNyZXQtNzc='
const HEADERS = `Authorization=Basic ${SECRET},X-Team=pacer`

/** XOR: the plaintext's bytes never appear in the ciphertext. */
const keyring: SafeStorageLike = {
  isEncryptionAvailable: () => true,
  encryptString: (text) => Buffer.from(Buffer.from(text).map((b) => b ^ 0x5a)),
  decryptString: (buf) => Buffer.from(buf.map((b) => b ^ 0x5a)).toString(),
}

const receivers: OtlpReceiver[] = []
let engine: Engine | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

async function receiver(opts: { status?: number } = {}): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver(opts)
  receivers.push(r)
  return r
}

/** What a handler threw (they throw at once, as the transports see it). */
function thrown(fn: () => unknown): (Error & { code?: string; field?: string }) | null {
  try {
    fn()
  } catch (err) {
    return err as Error
  }
  return null
}

function noSecretIn(files: string[]): void {
  for (const f of files) {
    if (existsSync(f)) expect(readFileSync(f).includes(SECRET), f).toBe(false)
  }
}

describe('Settings → Observability', () => {
  it('stores headers encrypted for one endpoint; Test and the batches send them there only', async () => {
    const a = await receiver()
    const b = await receiver()
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const secretsFile = join(dir, 'secrets.json')
    const secrets = createSecretStore({ safeStorage: keyring, filePath: secretsFile })
    engine = createEngine({ dbPath: db, secrets, otlp: { target: null } })
    engine.start()
    const h = engine.handlers

    // Headers before an endpoint: refused, naming the field.
    expect(thrown(() => h['otlp:headers']({ headers: HEADERS }))).toMatchObject({
      field: 'headers',
    })
    await h['settings:set']({ otlpEndpoint: a.url })
    // A header without its name is refused without echoing it.
    const bad = thrown(() => h['otlp:headers']({ headers: `Basic ${SECRET}` }))
    expect(bad?.message).toBe('headers: entry 1: its key is not a header name')

    const view = await h['otlp:headers']({ headers: HEADERS })
    expect(view.observability).toMatchObject({
      endpoint: a.url,
      effectiveUrl: `${a.url}/v1/traces`,
      from: 'settings',
      headerNames: ['Authorization', 'X-Team'],
      headersFrom: 'store',
      headersEndpoint: a.url,
      headersStorage: null,
      problem: null,
    })
    expect(JSON.stringify(view)).not.toContain(SECRET)

    const test = await h['otlp:test']({})
    expect(test.ok, test.message).toBe(true)
    expect(a.spans.map((s) => s.name)).toEqual(['pacer test'])
    expect(a.requests[0]!.headers['authorization']).toBe(`Basic ${SECRET}`)
    expect(a.requests[0]!.headers['x-team']).toBe('pacer')

    // A batch the console runs: one trace at the stored endpoint, with the headers.
    const { batchId } = await h['tasks:enqueue']({
      name: 'stored',
      tasks: [
        { type: 'q', payload: 'one' },
        { type: 'q', payload: 'one' },
      ],
    })
    const root = await until(() => a.spans.find((s) => s.name === 'invoke_workflow stored'), 30_000)
    expect(root.attributes['pacer.batch.id']).toBe(batchId)
    expect(a.spans.filter((s) => s.traceId === root.traceId && s.kind === 3)).toHaveLength(1)
    expect(a.requests.every((r) => r.headers['authorization'] === `Basic ${SECRET}`)).toBe(true)

    // Another endpoint: the headers stay bound to the first, and Settings says so.
    const moved = await h['settings:set']({ otlpEndpoint: b.url })
    expect(moved.observability.headerNames).toEqual([])
    expect(moved.observability.problem).toContain(`the headers stored for ${a.url} are not sent`)
    expect((await h['otlp:test']({})).ok).toBe(true)
    expect(b.requests.every((r) => r.headers['authorization'] === undefined)).toBe(true)

    await engine.shutdown({ graceMs: 0 })
    engine = undefined
    noSecretIn([db, `${db}-wal`, secretsFile])
    expect(readFileSync(secretsFile, 'utf8')).toContain('otlpHeaders')
  }, 60_000)

  it('Test reports a collector that refuses or is absent, and no endpoint', async () => {
    const refusing = await receiver({ status: 500 })
    const dir = tempDir()
    engine = createEngine({
      dbPath: join(dir, 'pacer.db'),
      secrets: envSecrets({}),
      otlp: { target: null },
    })
    const h = engine.handlers
    expect(await h['otlp:test']({})).toEqual({
      ok: false,
      message: 'no endpoint: save one above (or start with --otlp URL)',
    })
    // Headless: nothing can be stored, and the view says how headers are given instead.
    const view = await h['settings:set']({ otlpEndpoint: refusing.url })
    expect(view.observability.headersStorage).toContain('headless mode keeps no headers')
    expect(thrown(() => h['otlp:headers']({ headers: HEADERS }))).toMatchObject({
      code: 'secret_storage_unavailable',
    })
    const refused = await h['otlp:test']({})
    expect(refused.ok).toBe(false)
    expect(refused.message).toContain(`the collector at ${refusing.url}/v1/traces`)
    expect(refused.message).toMatch(/500|Internal Server Error/)
    // A URL with credentials is refused as a setting.
    expect(
      thrown(() => h['settings:set']({ otlpEndpoint: 'https://user:pw@example.test/otel' })),
    ).toMatchObject({ field: 'otlpEndpoint' })
  }, 60_000)
})
