// `pacer run` meeting a setup failure, as a user would: a real `pacer` process against loopback
// servers answering as OpenAI's and Anthropic's APIs do. The partition stops after the first
// answers, its tasks stay queued, the process exits 4 with one line naming provider, model,
// status and what to do; once the cause is fixed, the same command resumes and completes.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { createEngine } from '../../../src/main/engine/app/engine'
import { query, runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import {
  closedPort,
  closeVendors,
  fakeVendor,
  type Dialect,
  type FakeVendor,
  type Failures,
} from '../../helpers/fake-vendor'

const GOOD_KEY = 'sk-test-good-key-0123456789abcdef'
const NO_KEYS = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', PACER_OPENAI_COMPATIBLE_API_KEY: '' }

afterEach(closeVendors)

/** A database whose `provider` points at `url` (the Settings way), and a batch of `n` tasks. */
async function setup(provider: string, url: string, n: number) {
  const dir = tempDir('pacer-setup-')
  const db = join(dir, 'pacer.db')
  const engine = createEngine({ dbPath: db })
  await engine.handlers['settings:set']({ baseUrls: { [provider]: url } })
  await engine.shutdown()
  const tasks = Array.from({ length: n }, (_, i) => ({ type: 'summarize', payload: { doc: i } }))
  return { db, url, file: writeJsonl(dir, 'batch.jsonl', tasks) }
}

async function run(
  s: { db: string; url: string; file: string },
  provider: string,
  model: string,
  env: NodeJS.ProcessEnv,
) {
  // The URL on the command line too: a key from the environment goes only to a URL given with it.
  const args = ['run', s.file, '--db', s.db, '--provider', provider, '--model', model, '--json']
  args.push('--base-url', s.url)
  const r = await runPacer(args, { ...NO_KEYS, ...env })
  return { ...r, summary: JSON.parse(r.stdout) as RunSummary }
}

function tasksByStatus(db: string): Record<string, number> {
  const rows = query<{ status: string; n: number }>(
    db,
    'SELECT status, COUNT(*) AS n FROM tasks GROUP BY status',
  )
  return Object.fromEntries(rows.map((r) => [r.status, r.n]))
}

function ledgerRows(db: string): { outcome: string; status: number | null; n: number }[] {
  return query(
    db,
    'SELECT outcome, status, COUNT(*) AS n FROM ledger GROUP BY outcome, status ORDER BY outcome',
  )
}

function batchRow(db: string) {
  return query<{ state: string; stop_reason: string | null }>(
    db,
    'SELECT state, stop_reason FROM batches',
  )
}

interface Case {
  name: string
  api: Dialect
  model: string
  state: Partial<Failures>
  env: NodeJS.ProcessEnv
  /** The stop line: status, what the vendor said, what to do. */
  says: RegExp
  /** The most requests the server may see before the partition stops. */
  requests: number
  /** The operator's fix: the server's state or the environment changes. */
  fix: (server: FakeVendor) => NodeJS.ProcessEnv
}

/** The fix on the vendor's side (access granted, credit added): the same key then works. */
const troubleCleared = (env: NodeJS.ProcessEnv) => (server: FakeVendor) => {
  server.failures.trouble = 'none'
  return env
}

const CASES: Case[] = [
  {
    name: 'a bad key (OpenAI 401)',
    api: 'openai',
    model: 'gpt-4o-mini',
    state: {},
    env: { OPENAI_API_KEY: 'sk-test-wrong-key-000000000000' },
    says: /HTTP 401: Incorrect API key provided.*check OPENAI_API_KEY/,
    requests: 3,
    fix: () => ({ OPENAI_API_KEY: GOOD_KEY }),
  },
  {
    name: 'a key without access to the model (OpenAI 403)',
    api: 'openai',
    model: 'gpt-4o',
    state: { trouble: 'forbidden' },
    env: { OPENAI_API_KEY: GOOD_KEY },
    says: /HTTP 403: Project `proj_test` does not have access to model `gpt-4o`.*give the key access/,
    requests: 3,
    fix: troubleCleared({ OPENAI_API_KEY: GOOD_KEY }),
  },
  {
    name: 'an unknown model (Anthropic 404)',
    api: 'anthropic',
    model: 'claude-nope-1',
    state: {},
    env: { ANTHROPIC_API_KEY: GOOD_KEY },
    says: /HTTP 404: model: claude-nope-1.*check the model name/,
    requests: 3,
    fix: (server) => {
      server.failures.models!.push('claude-nope-1')
      return { ANTHROPIC_API_KEY: GOOD_KEY }
    },
  },
  {
    name: 'no key at all (Anthropic: nothing is sent)',
    api: 'anthropic',
    model: 'claude-haiku-4-5',
    state: {},
    env: {},
    says: /no Anthropic API key.*set ANTHROPIC_API_KEY/,
    requests: 0,
    fix: () => ({ ANTHROPIC_API_KEY: GOOD_KEY }),
  },
  {
    name: 'an account out of quota (OpenAI insufficient_quota 429)',
    api: 'openai',
    model: 'gpt-4o-mini',
    state: { trouble: 'no_credit' },
    env: { OPENAI_API_KEY: GOOD_KEY },
    says: /HTTP 429: You exceeded your current quota.*add credit/,
    requests: 3,
    fix: troubleCleared({ OPENAI_API_KEY: GOOD_KEY }),
  },
  {
    name: 'a credit balance too low (Anthropic 400)',
    api: 'anthropic',
    model: 'claude-haiku-4-5',
    state: { trouble: 'no_credit' },
    env: { ANTHROPIC_API_KEY: GOOD_KEY },
    says: /HTTP 400: Your credit balance is too low.*add credit/,
    requests: 3,
    fix: troubleCleared({ ANTHROPIC_API_KEY: GOOD_KEY }),
  },
]

/** What every stopped run leaves: exit 4, one clear line, every task queued, a resumable batch. */
function expectStopped(
  r: Awaited<ReturnType<typeof run>>,
  db: string,
  partition: string,
  says: RegExp,
  tasks: number,
) {
  expect(r.code, r.stderr).toBe(4)
  const line = r.stderr.split('\n').find((l) => l.includes(`${partition} stopped:`))
  expect(line, r.stderr).toMatch(says)
  expect(line).toMatch(/its tasks stay queued/)
  expect(r.summary.stopped).toEqual([{ partition, reason: expect.stringMatching(says) }])
  expect(r.summary).toMatchObject({ failed: 0, executed: 0, queued: tasks, failures: [] })
  expect(tasksByStatus(db)).toEqual({ queued: tasks })
  const [batch] = batchRow(db)
  expect(batch?.state).toBe('interrupted')
  expect(batch?.stop_reason).toMatch(says)
}

/** The same command after the fix: the batch resumes and every task completes. */
async function expectResumes(
  s: { db: string; url: string; file: string },
  provider: string,
  model: string,
  env: NodeJS.ProcessEnv,
  tasks: number,
) {
  const again = await run(s, provider, model, env)
  expect(again.code, again.stderr).toBe(0)
  expect(again.summary).toMatchObject({ resumed: true, executed: tasks, failed: 0, stopped: [] })
  expect(tasksByStatus(s.db)).toEqual({ succeeded: tasks })
  expect(batchRow(s.db)).toEqual([{ state: 'done', stop_reason: null }])
}

describe('pacer run stops a partition on a setup failure and resumes once it is fixed', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const server = await fakeVendor({
        dialect: c.api,
        failures: {
          key: GOOD_KEY,
          models: ['gpt-4o-mini', 'gpt-4o', 'claude-haiku-4-5'],
          trouble: 'none',
          ...c.state,
        },
      })
      const s = await setup(c.api, server.baseUrl, 50)
      const partition = `${c.api}:${c.model}`

      const r = await run(s, c.api, c.model, c.env)
      expectStopped(r, s.db, partition, c.says, 50)
      // A few identical answers, not one per task.
      expect(server.requests.length).toBeLessThanOrEqual(c.requests)
      // Every answer is on the ledger as an error (a missing key's too: no request, no cost).
      const rows = ledgerRows(s.db)
      expect(rows.every((row) => row.outcome === 'error')).toBe(true)
      const ledgered = rows.reduce((n, row) => n + row.n, 0)
      if (c.requests > 0) expect(ledgered).toBe(server.requests.length)
      else expect(ledgered).toBeLessThanOrEqual(3)

      const sent = server.requests.length
      await expectResumes(s, c.api, c.model, c.fix(server), 50)
      expect(server.requests.length - sent).toBe(50)
    })
  }

  it('a refused connection (nothing listens on the port): at most 3 attempts in all', async () => {
    const port = await closedPort()
    const url = `http://127.0.0.1:${port}/v1`
    const s = await setup('openai-compatible', url, 50)
    const partition = 'openai-compatible:local-model'

    const r = await run(s, 'openai-compatible', 'local-model', {})
    expectStopped(r, s.db, partition, /ECONNREFUSED.*nothing listens there: start the server/, 50)
    // Each attempt is a ledger row (status null: no answer came).
    const rows = ledgerRows(s.db)
    expect(rows).toEqual([{ outcome: 'error', status: null, n: expect.any(Number) }])
    expect(rows[0]!.n).toBeLessThanOrEqual(3)

    // The operator starts the server on the configured port.
    const server = await fakeVendor({
      failures: { key: GOOD_KEY, models: ['local-model'], trouble: 'none' },
      port,
    })
    await expectResumes(
      s,
      'openai-compatible',
      'local-model',
      { PACER_OPENAI_COMPATIBLE_API_KEY: GOOD_KEY },
      50,
    )
    expect(server.requests.length).toBe(50)
  })

  it('a port fetch refuses to connect to (6000, "bad port"): one line naming the URL', async () => {
    // The Fetch standard's blocked ports: Node's fetch refuses them before any connection, so
    // no retry and no other task can get through. Said as the base URL's fault, not each task's.
    const url = 'http://127.0.0.1:6000/v1'
    const s = await setup('openai-compatible', url, 50)
    const partition = 'openai-compatible:local-model'
    const r = await run(s, 'openai-compatible', 'local-model', {})
    expectStopped(
      r,
      s.db,
      partition,
      /http:\/\/127\.0\.0\.1:6000\/v1.*port 6000.*refuses.*another port/,
      50,
    )
    // Nothing was sent: no attempt is billed, and one line said it, not one per task.
    expect(r.stderr.match(/stopped:/g)).toHaveLength(1)
    expect(ledgerRows(s.db).reduce((n, row) => n + row.n, 0)).toBeLessThanOrEqual(3)

    // The operator moves the server to another port and points the base URL at it.
    const server = await fakeVendor({
      failures: { key: GOOD_KEY, models: ['local-model'], trouble: 'none' },
    })
    await expectResumes(
      { ...s, url: server.baseUrl },
      'openai-compatible',
      'local-model',
      { PACER_OPENAI_COMPATIBLE_API_KEY: GOOD_KEY },
      50,
    )
    expect(server.requests.length).toBe(50)
  })
})
