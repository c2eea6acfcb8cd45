// Where API keys go, with real `pacer` processes and loopback servers speaking OpenAI's and
// Anthropic's APIs: a key from the environment reaches the default server or a base URL given with
// it, never a URL that only the database names; a stored key only the URL it was stored for; and
// every call says `User-Agent: pacer/<version>`.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSecretStore, type SafeStorageLike } from '../../../src/main/desktop/secrets'
import { createEngine, type Engine } from '../../../src/main/engine/app/engine'
import type { SettingsView } from '../../../src/shared/contract'
import { ROOT, query, runPacer, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'
import { eitherDialect, vendor as fakeVendor, type FakeVendor } from '../../helpers/fake-vendor'

const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version
// Occurs nowhere else, so a plain substring search finds any leak.
const KEY = 'sk-SENTINEL-keys-5e4d3c2b1a-DO-NOT-LEAK'
// The parent's own keys and URLs must not leak into the children.
const CLEAN = {
  OPENAI_API_KEY: '',
  ANTHROPIC_API_KEY: '',
  PACER_OPENAI_COMPATIBLE_API_KEY: '',
  OPENAI_BASE_URL: '',
  ANTHROPIC_BASE_URL: '',
  PACER_OPENAI_COMPATIBLE_BASE_URL: '',
}
const TASKS = [
  { type: 'q', payload: { prompt: 'one' } },
  { type: 'q', payload: { prompt: 'two' } },
]

const servers: FakeVendor[] = []
let engine: Engine | undefined
afterEach(async () => {
  await engine?.shutdown({ graceMs: 0 })
  engine = undefined
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

async function vendor(): Promise<FakeVendor> {
  const s = await fakeVendor(eitherDialect)
  servers.push(s)
  return s
}

/** A new database whose openai base URL was set through `pacer serve`'s console, with no key. */
async function dbWithPlantedUrl(url: string): Promise<{ dir: string; db: string }> {
  const dir = tempDir()
  const db = join(dir, 'pacer.db')
  const serve = startPacer(['serve', '--db', db, '--port', '0'], CLEAN)
  try {
    const consoleUrl = new URL(
      await until(() => /Pacer console: (\S+)/.exec(serve.output().stdout)?.[1], 60_000),
    )
    const res = await fetch(new URL('/api/commands/settings:set', consoleUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${consoleUrl.searchParams.get('token')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ baseUrls: { openai: url } }),
    })
    expect(await res.json()).toMatchObject({ ok: true, value: { providers: { openai: {} } } })
  } finally {
    serve.child.kill('SIGINT')
    expect((await serve.done).code).toBe(0)
  }
  return { dir, db }
}

function expectPacerCalls(server: FakeVendor, n: number, key: { header: string; value: string }) {
  expect(server.requests).toHaveLength(n)
  for (const r of server.requests) {
    expect(r.headers[key.header]).toBe(key.value)
    expect(r.headers['user-agent']).toBe(`pacer/${VERSION}`)
  }
}

const bearer = { header: 'authorization', value: `Bearer ${KEY}` }
const run = (db: string, file: string, ...args: string[]) => [
  'run',
  file,
  '--db',
  db,
  '--provider',
  'openai',
  '--model',
  'gpt-4o-mini',
  ...args,
]

describe('a key from the environment and a base URL from the database', () => {
  it('the planted URL is refused in one line: no request, no key, the batch left to resume', async () => {
    const planted = await vendor()
    const { dir, db } = await dbWithPlantedUrl(`${planted.url}/v1`)
    const file = writeJsonl(dir, 'batch.jsonl', TASKS)

    const r = await runPacer(run(db, file), { ...CLEAN, OPENAI_API_KEY: KEY })
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toEqual([
      `pacer: openai: the base URL ${planted.url}/v1 stored in the database was never given a key, so OPENAI_API_KEY from the environment is not sent there; pass --base-url ${planted.url}/v1 (or OPENAI_BASE_URL) with the key, or store the key for that URL in Settings, or clear the base URL in Settings`,
    ])
    expect(planted.requests).toHaveLength(0)
    expect(readFileSync(db).includes(KEY)).toBe(false)
    // Nothing ran or failed: the tasks wait, queued, in a batch the fixed command resumes.
    expect(query<{ status: string }>(db, 'SELECT status FROM tasks')).toEqual([
      { status: 'queued' },
      { status: 'queued' },
    ])
    expect(query<{ state: string }>(db, 'SELECT state FROM batches')).toEqual([
      { state: 'interrupted' },
    ])

    // Given with the key on the command line, the same URL gets it: the operator said so.
    const given = await runPacer(run(db, file, '--base-url', `${planted.url}/v1`), {
      ...CLEAN,
      OPENAI_API_KEY: KEY,
    })
    expect(given.code).toBe(0)
    expect(given.stderr).toContain('pacer: resuming batch')
    expectPacerCalls(planted, 2, bearer)
  })

  it('--base-url and OPENAI_BASE_URL win over the stored URL and carry the key there', async () => {
    const planted = await vendor()
    const flagged = await vendor()
    const fromEnv = await vendor()
    const { dir, db } = await dbWithPlantedUrl(`${planted.url}/v1`)
    const env = { ...CLEAN, OPENAI_API_KEY: KEY }

    const a = await runPacer(
      run(db, writeJsonl(dir, 'a.jsonl', TASKS), '--base-url', `${flagged.url}/v1`),
      env,
    )
    expect(a.code).toBe(0)
    expectPacerCalls(flagged, 2, bearer)
    expect(flagged.requests[0]!.url).toBe('/v1/chat/completions')

    // The flag wins over the environment; the environment alone is enough.
    const both = { ...env, OPENAI_BASE_URL: `${fromEnv.url}/v1` }
    const b = await runPacer(
      run(
        db,
        writeJsonl(dir, 'b.jsonl', [{ type: 'b', payload: 1 }]),
        '--base-url',
        `${flagged.url}/v1`,
      ),
      both,
    )
    expect(b.code).toBe(0)
    expect(flagged.requests).toHaveLength(3)
    // (New tasks: those of a.jsonl would be reused, not sent.)
    const fresh = TASKS.map((t) => ({ ...t, type: 'c' }))
    const c = await runPacer(run(db, writeJsonl(dir, 'c.jsonl', fresh)), both)
    expect(c.code).toBe(0)
    expectPacerCalls(fromEnv, 2, bearer)
    expect(planted.requests).toHaveLength(0)
  })

  it('ANTHROPIC_BASE_URL and PACER_OPENAI_COMPATIBLE_BASE_URL carry their keys', async () => {
    const anthropic = await vendor()
    const local = await vendor()
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'batch.jsonl', [
      { type: 'q', payload: 'to claude', provider: 'anthropic', model: 'claude-haiku-4-5' },
      { type: 'q', payload: 'to llama', provider: 'openai-compatible', model: 'llama' },
    ])
    const r = await runPacer(['run', file, '--db', db], {
      ...CLEAN,
      ANTHROPIC_API_KEY: KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
      PACER_OPENAI_COMPATIBLE_API_KEY: KEY,
      PACER_OPENAI_COMPATIBLE_BASE_URL: `${local.url}/v1`,
    })
    expect(r.stderr).toContain('executed 2')
    expect(r.code).toBe(0)
    expectPacerCalls(anthropic, 1, { header: 'x-api-key', value: KEY })
    expect(anthropic.requests[0]!.url).toBe('/v1/messages')
    expectPacerCalls(local, 1, bearer)

    // --base-url is for the --provider of the run, here anthropic.
    const flagged = await vendor()
    const again = await runPacer(
      [
        ...['run', writeJsonl(dir, 'f.jsonl', TASKS), '--db', db],
        ...['--provider', 'anthropic', '--model', 'claude-haiku-4-5', '--base-url', flagged.url],
      ],
      { ...CLEAN, ANTHROPIC_API_KEY: KEY },
    )
    expect(again.code).toBe(0)
    expectPacerCalls(flagged, 2, { header: 'x-api-key', value: KEY })
  })

  it('a bad base URL is one line naming where it came from, and credentials are not echoed', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'batch.jsonl', TASKS)
    const cases: [string[], Record<string, string>, string][] = [
      [
        ['--base-url', 'ftp://files.example'],
        {},
        'pacer: --base-url: expected an http:// or https:// URL without user:password, got "ftp://files.example"',
      ],
      [
        [],
        { OPENAI_BASE_URL: 'https://user:hunter2@proxy.example/v1' },
        'pacer: OPENAI_BASE_URL: expected an http:// or https:// URL without user:password, got one with credentials (put the key in the *_API_KEY variable)',
      ],
    ]
    for (const [args, env, line] of cases) {
      const r = await runPacer(run(db, file, ...args), { ...CLEAN, ...env })
      expect(r.code).toBe(2)
      expect(r.stderr.trim().split('\n')).toEqual([line])
    }
    const sim = await runPacer(
      ['run', file, '--db', db, '--base-url', 'http://127.0.0.1:1/v1'],
      CLEAN,
    )
    expect(sim.code).toBe(2)
    expect(sim.stderr.trim()).toBe(
      'pacer: --base-url is for --provider openai, anthropic or openai-compatible, not sim',
    )
  })

  it('pacer serve --base-url: the console shows where calls go, and its tasks carry the key', async () => {
    const flagged = await vendor()
    const db = join(tempDir(), 'pacer.db')
    const serve = startPacer(
      [
        'serve',
        '--db',
        db,
        '--port',
        '0',
        '--provider',
        'openai',
        '--base-url',
        `${flagged.url}/v1`,
      ],
      { ...CLEAN, OPENAI_API_KEY: KEY },
    )
    try {
      const url = new URL(
        await until(() => /Pacer console: (\S+)/.exec(serve.output().stdout)?.[1], 60_000),
      )
      const api = async (channel: string, input: unknown) => {
        const res = await fetch(new URL(`/api/commands/${channel}`, url), {
          method: 'POST',
          headers: {
            authorization: `Bearer ${url.searchParams.get('token')}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify(input),
        })
        return (await res.json()) as { ok: boolean; value: SettingsView }
      }
      const view = await api('settings:get', {})
      expect(view.value.providers.openai).toMatchObject({
        baseUrl: null,
        effectiveBaseUrl: `${flagged.url}/v1`,
        baseUrlFrom: 'process',
        keyFrom: 'environment',
        keyRefusal: null,
      })
      expect(JSON.stringify(view)).not.toContain(KEY)
      await api('tasks:enqueue', {
        tasks: [{ type: 'q', payload: 'hi', provider: 'openai', model: 'gpt-4o-mini' }],
      })
      await until(() => flagged.requests.length === 1)
      expectPacerCalls(flagged, 1, bearer)
    } finally {
      serve.child.kill('SIGINT')
      await serve.done
    }
  })
})

/** safeStorage with a keyring: XOR, so the key's bytes never appear in the file. */
const keyring: SafeStorageLike = {
  isEncryptionAvailable: () => true,
  encryptString: (text) => Buffer.from(Buffer.from(text).map((b) => b ^ 0x5a)),
  decryptString: (buf) => Buffer.from(buf.map((b) => b ^ 0x5a)).toString(),
}

describe('a key stored through Settings', () => {
  it('goes only to the URL it was stored for: changed to another URL, that one gets no key', async () => {
    const a = await vendor()
    const b = await vendor()
    const dir = tempDir()
    const secretsFile = join(dir, 'secrets.json')
    const secrets = createSecretStore({
      safeStorage: keyring,
      filePath: secretsFile,
      platform: 'linux',
    })
    engine = createEngine({ dbPath: join(dir, 'pacer.db'), secrets })
    engine.start()
    const h = engine.handlers
    const runOne = async (prompt: string) => {
      const { batchId } = await h['tasks:enqueue']({
        tasks: [{ type: 'q', payload: prompt, provider: 'openai-compatible', model: 'm' }],
      })
      await until(
        () => engine!.queue.counts(batchId).queued + engine!.queue.counts(batchId).running === 0,
      )
      return engine!.queue.listTasks({ batchId, offset: 0, limit: 1 }).rows[0]!
    }

    await h['settings:set']({ baseUrls: { 'openai-compatible': `${a.url}/v1` } })
    const stored = await h['secrets:set']({ provider: 'openai-compatible', apiKey: KEY })
    expect(stored.providers['openai-compatible']).toMatchObject({
      keyFrom: 'store',
      keyBaseUrl: `${a.url}/v1`,
      keyRefusal: null,
    })
    expect(JSON.parse(readFileSync(secretsFile, 'utf8')).keys['openai-compatible'].baseUrl).toBe(
      `${a.url}/v1`,
    )
    expect((await runOne('first')).status).toBe('succeeded')
    expectPacerCalls(a, 1, bearer)

    // The URL moves to B: the key stays stored for A, B receives nothing at all.
    const moved = await h['settings:set']({ baseUrls: { 'openai-compatible': `${b.url}/v1` } })
    const refusal = `openai-compatible: the API key in Settings was stored for ${a.url}/v1, so it is not sent to ${b.url}/v1; store the key again in Settings while the base URL is ${b.url}/v1, or set the base URL back`
    expect(moved.providers['openai-compatible'].keyRefusal).toBe(refusal)
    // A refused key is a setup failure: the partition stops, the task stays queued (not failed)
    // and its batch is held with the refusal as its reason.
    const { batchId: second } = await h['tasks:enqueue']({
      tasks: [{ type: 'q', payload: 'second', provider: 'openai-compatible', model: 'm' }],
    })
    const held = await until(async () =>
      (await h['batches:list']({})).find((x) => x.id === second && x.stopReason),
    )
    expect(held.stopReason).toContain(refusal)
    expect(engine.queue.counts(second).queued).toBe(1)
    expect(b.requests).toHaveLength(0)
    expect(a.requests).toHaveLength(1)

    // Stored again while B is set, the key goes to B (the held task too, once resumed), not to A.
    await h['secrets:set']({ provider: 'openai-compatible', apiKey: KEY })
    await h['batches:resume']({ batchId: second })
    await until(() => engine!.queue.counts(second).succeeded === 1)
    expect((await runOne('third')).status).toBe('succeeded')
    expectPacerCalls(b, 2, bearer)
    const back = await h['settings:set']({ baseUrls: { 'openai-compatible': `${a.url}/v1` } })
    expect(back.providers['openai-compatible'].keyRefusal).toContain(`stored for ${b.url}/v1`)
  })

  it('a key stored before keys were bound goes only to the default URL', async () => {
    const a = await vendor()
    const dir = tempDir()
    const filePath = join(dir, 'secrets.json')
    // A secrets file as the previous version wrote it: no baseUrl.
    const old = createSecretStore({ safeStorage: keyring, filePath, platform: 'linux' })
    old.set('openai', KEY)
    expect(JSON.parse(readFileSync(filePath, 'utf8')).keys.openai.baseUrl).toBeUndefined()
    engine = createEngine({
      dbPath: join(dir, 'pacer.db'),
      secrets: createSecretStore({ safeStorage: keyring, filePath, platform: 'linux' }),
    })
    const view = await engine.handlers['settings:get']({})
    expect(view.providers.openai).toMatchObject({
      keyBaseUrl: 'https://api.openai.com/v1',
      keyRefusal: null,
    })
    const moved = await engine.handlers['settings:set']({ baseUrls: { openai: `${a.url}/v1` } })
    expect(moved.providers.openai.keyRefusal).toBe(
      `openai: the API key in Settings was stored before Pacer bound keys to base URLs, so it goes only to the default https://api.openai.com/v1, not to ${a.url}/v1; store the key again in Settings while the base URL is ${a.url}/v1, or set the base URL back`,
    )
  })
})
