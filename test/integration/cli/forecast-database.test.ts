// `pacer forecast` knows the database it reads: stored answers are reused at $0, the output-token
// assumption and the models priced against are named, and neither it nor any other read command
// writes to the database, its -wal, or HOME.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import type { ForecastView } from '../../../src/shared/contract'
import { runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import { changesBetween, snapshotFolder } from '../../helpers/real-config-guard'

const FAST = ['--sim-latency-scale', '0']
const TASKS = [
  { type: 'classify', payload: { prompt: 'one' } },
  { type: 'classify', payload: { prompt: 'one' } },
  { type: 'classify', payload: { prompt: 'two' } },
  { type: 'agent', steps: 3, payload: { prompt: 'x'.repeat(400) } },
]

type Forecast = ForecastView & { invalidLines: number }

async function forecast(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Forecast> {
  const r = await runPacer(['forecast', ...args, '--json'], env)
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Forecast
}

/** What a read must leave as it was: the bytes and mtime of the file and of its -wal. */
function fileState(path: string): string {
  if (!existsSync(path)) return 'absent'
  const bytes = readFileSync(path)
  const hash = createHash('sha256').update(bytes).digest('hex')
  return `${bytes.length}:${hash}:${statSync(path).mtimeMs}`
}

describe('pacer forecast on a database', () => {
  it('forecasts a finished batch at $0 with every task reused; audit mode would run them all', async () => {
    const dir = tempDir()
    const db = join(dir, 'p.db')
    const file = writeJsonl(dir, 'b.jsonl', TASKS)
    const before = await forecast([file, '--db', db])
    expect(before.total).toMatchObject({ tasks: 4, distinctTasks: 3, reused: 0, calls: 5 })
    expect(before.total.costMicros).toBeGreaterThan(0)

    const run = await runPacer(['run', file, '--db', db, ...FAST])
    expect(run.code, run.stderr).toBe(0)

    const after = await forecast([file, '--db', db])
    expect(after.total).toMatchObject({
      tasks: 4,
      reused: 4,
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      costMicros: 0,
    })
    // What reusing them saves is what running them would have cost.
    expect(after.total.savedByDedupMicros).toBe(
      before.total.costMicros! + before.total.savedByDedupMicros,
    )
    for (const row of after.byType) expect(row.reused).toBe(row.tasks)

    const text = await runPacer(['forecast', file, '--db', db])
    expect(text.stdout).toMatch(/TOTAL\s+4\s+3\s+4\s+0\s+0\s+0\s+\$0\.0000/)
    expect(text.stdout).toContain('4 task(s) reuse an answer this database already holds')

    // Audit mode runs duplicates and stored answers alike: nothing is reused.
    const audit = await forecast([file, '--db', db, '--audit'])
    expect(audit.total).toMatchObject({ reused: 0, calls: 6 })

    // A new task beside the finished ones is the only one left to pay for.
    const more = writeJsonl(dir, 'more.jsonl', [...TASKS, { type: 'classify', payload: 'three' }])
    const next = await forecast([more, '--db', db])
    expect(next.total).toMatchObject({ tasks: 5, reused: 4, calls: 1 })
  }, 60_000)

  it('names the output assumption and the model priced against, and takes --assume-output-tokens', async () => {
    const dir = tempDir()
    const db = join(dir, 'none.db')
    const file = writeJsonl(dir, 'b.jsonl', TASKS)
    const byDefault = await forecast([file, '--db', join(dir, 'none.db')])
    expect(byDefault.assumedOutputTokens).toBeNull()
    expect(byDefault.models).toEqual([
      { provider: 'sim', model: 'sim-small', tasks: 4, price: { input: 3, output: 15 } },
    ])

    const assumed = await forecast([
      file,
      '--assume-output-tokens',
      '50',
      '--db',
      join(dir, 'x.db'),
    ])
    expect(assumed.assumedOutputTokens).toBe(50)
    expect(assumed.total.outputTokens).toBe(50 * assumed.total.calls)
    expect(assumed.total.outputTokens).not.toBe(byDefault.total.outputTokens)

    const text = await runPacer(['forecast', file, '--db', join(dir, 'y.db')])
    expect(text.stdout).toContain('output tokens: assumed, per step,')
    expect(text.stdout).toContain('--assume-output-tokens N')
    expect(text.stdout).toMatch(
      /priced against sim\/sim-small \(4 task\(s\)\): \$3\.00 input, \$15\.00 output per 1M/,
    )
    const set = await runPacer(['forecast', file, '--assume-output-tokens', '7', '--db', db])
    expect(set.stdout).toContain('output tokens: assumed 7 per step (--assume-output-tokens)')

    const bad = await runPacer(['forecast', file, '--assume-output-tokens', '-3', '--db', db])
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toMatch(/--assume-output-tokens.*expected an integer ≥ 0, got "-3"/)
  }, 60_000)
})

describe('read commands never write', () => {
  it('forecast, summary, batches, results and export leave the database, its -wal and HOME as they were', async () => {
    const dir = tempDir()
    const db = join(dir, 'p.db')
    const file = writeJsonl(dir, 'b.jsonl', TASKS)
    expect((await runPacer(['run', file, '--db', db, ...FAST])).code).toBe(0)
    const reads = [
      ['forecast', file, '--db', db],
      ['summary', '--db', db],
      ['batches', '--db', db],
      ['results', '--db', db],
      ['export', '--db', db, '--out', join(dir, 'ledger.csv')],
    ]

    // Closed: the runs folded their log in; a read leaves the file as it is.
    const home = tempDir('pacer-read-home-')
    const homeBefore = snapshotFolder(home)
    const closed = fileState(db)
    for (const args of reads) {
      const r = await runPacer(args, { HOME: home })
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
      expect(fileState(db), args[0]).toBe(closed)
      // SQLite's WAL reader may leave an empty -wal beside the file: never a byte in it.
      expect(existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0, args[0]).toBe(0)
    }
    expect(changesBetween(homeBefore, snapshotFolder(home))).toEqual([])

    // Open elsewhere with commits still in the -wal: a read changes neither file.
    const writer = new Database(db)
    try {
      writer.pragma('wal_autocheckpoint = 0')
      writer.exec("CREATE TABLE IF NOT EXISTS scratch(x); INSERT INTO scratch VALUES ('w')")
      const file0 = fileState(db)
      const wal0 = fileState(`${db}-wal`)
      expect(wal0).not.toMatch(/^(absent|0:)/)
      for (const args of reads) {
        const r = await runPacer(args)
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
        expect(fileState(db), args[0]).toBe(file0)
        expect(fileState(`${db}-wal`), args[0]).toBe(wal0)
      }
    } finally {
      writer.close()
    }
  }, 120_000)
})
