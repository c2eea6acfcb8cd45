// The `pacer` command line as a user meets it: bad input, interruption and resume, audit mode,
// summary, export and forecast, each through a real child process and a real database file.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { createEngine } from '../../../src/main/engine/app/engine'
import { query, runPacer, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'

const FAST = ['--sim-latency-scale', '0.05']

describe('pacer run: bad input', () => {
  it('lists every invalid line with its number and field, queues nothing, exits 2', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = join(dir, 'bad.jsonl')
    writeFileSync(
      file,
      [
        JSON.stringify({ type: 'ok', payload: { a: 1 } }),
        '{"type": "broken", "payload": ',
        JSON.stringify({ payload: { a: 2 } }),
        JSON.stringify({ type: 'x', payload: 1, steps: 0 }),
        '',
        JSON.stringify({ type: 'x', payload: { price: 1 }, colour: 'red' }),
        // Half a surrogate pair is not text (1e999 is valid JSON, kept as written since issue 11).
        '{"type":"x","payload":{"items":[1,2,3,{"price":"\\ud800"}]}}',
      ].join('\n'),
    )
    const r = await runPacer(['run', file, '--db', db])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('bad.jsonl:2: not valid JSON')
    expect(r.stderr).toMatch(/bad\.jsonl:3: type: /)
    expect(r.stderr).toMatch(/bad\.jsonl:4: steps: /)
    expect(r.stderr).toMatch(/bad\.jsonl:6: .*colour/)
    expect(r.stderr).toMatch(/bad\.jsonl:7: payload\.items\[3\]\.price/)
    expect(r.stderr).toContain('nothing was queued')
    expect(r.stderr).not.toContain('bad.jsonl:1:')
    // Nothing enqueued: no batch, no task.
    if (existsSync(db)) expect(query(db, 'SELECT * FROM tasks')).toHaveLength(0)
  })

  it('--skip-invalid queues the valid lines and says how many were skipped', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = join(dir, 'mixed.jsonl')
    writeFileSync(
      file,
      ['{"type":"a","payload":1}', 'nope', '{"type":"b","payload":2}', '{"payload":3}'].join('\n'),
    )
    const r = await runPacer(['run', file, '--db', db, '--skip-invalid', '--json', ...FAST])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain('skipped 2 invalid line(s)')
    const s = JSON.parse(r.stdout) as RunSummary
    expect(s.tasks).toBe(2)
    expect(s.skippedLines).toBe(2)
  })

  it.each([
    [
      'a missing file',
      (dir: string) => ['run', join(dir, 'nope.jsonl')],
      /cannot read .*nope\.jsonl: no such file/,
    ],
    [
      'an empty file',
      (dir: string) => {
        writeFileSync(join(dir, 'empty.jsonl'), '\n  \n')
        return ['run', join(dir, 'empty.jsonl')]
      },
      /empty/,
    ],
    [
      'an unknown flag',
      (dir: string) => ['run', join(dir, 'x.jsonl'), '--turbo'],
      /unknown option '--turbo'/,
    ],
    [
      'a bad number',
      (dir: string) => ['run', join(dir, 'x.jsonl'), '--max-concurrency', 'lots'],
      /--max-concurrency.*expected an integer/,
    ],
  ])('%s: one clear line and exit 2', async (_name, args, message) => {
    const dir = tempDir()
    const r = await runPacer(args(dir))
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(r.stderr).not.toMatch(/\n\s+at /) // no stack trace
  })

  it('summary and export refuse a database that does not exist instead of creating one', async () => {
    const missing = join(tempDir(), 'typo.db')
    for (const args of [['summary'], ['export', '--out', join(tempDir(), 'x.csv')]]) {
      const r = await runPacer([...args, '--db', missing])
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/no Pacer database at .*typo\.db/)
    }
    expect(existsSync(missing)).toBe(false)
  })

  it('a real provider without --model is one usage line, not one per task', async () => {
    const dir = tempDir()
    const file = writeJsonl(dir, 'b.jsonl', [
      { type: 'a', payload: 1 },
      { type: 'a', payload: 2 },
    ])
    const r = await runPacer(['run', file, '--db', join(dir, 'p.db'), '--provider', 'openai'])
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe(
      'pacer: --model is required with --provider openai: 2 task(s) name no model',
    )
  })

  it('a key reused with a different payload is refused with its line', async () => {
    const dir = tempDir()
    const file = writeJsonl(dir, 'keys.jsonl', [
      { type: 'a', key: 'order-1', payload: { n: 1 } },
      { type: 'a', key: 'order-1', payload: { n: 2 } },
    ])
    const r = await runPacer(['run', file, '--db', join(dir, 'pacer.db')])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/keys\.jsonl:2: key: key_reused_with_different_payload/)
  })
})

describe('pacer run: interruption, resume, audit', () => {
  it('Ctrl-C stops admitting and releases claims; the same command resumes without re-billing', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const tasks = Array.from({ length: 40 }, (_, i) => ({ type: 'job', payload: { i } }))
    const file = writeJsonl(dir, 'batch.jsonl', tasks)
    const first = startPacer(['run', file, '--db', db, '--json', '--sim-latency-scale', '3'])
    await until(() => {
      const [row] = query<{ n: number }>(
        db,
        `SELECT COUNT(*) AS n FROM tasks WHERE status='succeeded'`,
      )
      return (row?.n ?? 0) >= 5
    })
    first.child.kill('SIGINT')
    const r1 = await first.done
    expect(r1.code, r1.stderr).toBe(130)
    expect(r1.stderr).toContain('letting in-flight calls finish')
    const s1 = JSON.parse(r1.stdout) as RunSummary
    expect(s1.interrupted).toBe(true)
    expect(s1.executed).toBeGreaterThanOrEqual(5)
    expect(s1.executed).toBeLessThan(40)
    // Nothing is left running or claimed: every task is done or back in the queue.
    expect(query(db, `SELECT * FROM tasks WHERE status='running'`)).toHaveLength(0)
    expect(query(db, `SELECT * FROM claims WHERE state='running'`)).toHaveLength(0)
    expect(query<{ state: string }>(db, 'SELECT state FROM batches')).toEqual([
      { state: 'interrupted' },
    ])

    const r2 = await runPacer(['run', file, '--db', db, '--json', ...FAST])
    expect(r2.code, r2.stderr).toBe(0)
    const s2 = JSON.parse(r2.stdout) as RunSummary
    expect(s2.resumed).toBe(true)
    expect(s2.tasks).toBe(40)
    expect(s2.executed).toBe(40)
    // Each task executed exactly once over both runs.
    const perFp = query<{ n: number }>(
      db,
      `SELECT COUNT(*) AS n FROM ledger WHERE outcome='executed' GROUP BY fp`,
    )
    expect(perFp).toHaveLength(40)
    expect(perFp.every((r) => r.n === 1)).toBe(true)

    // A second, new run of the same file is answered from stored results: reused, not billed.
    const r3 = await runPacer(['run', file, '--db', db, '--json', ...FAST])
    const s3 = JSON.parse(r3.stdout) as RunSummary
    expect(s3.resumed).toBe(false)
    expect(s3.reused).toBe(40)
    expect(s3.executed).toBe(0)
    expect(s3.costUsd).toBe(0)
    expect(s3.savedUsd).toBeCloseTo(s2.costUsd ?? 0, 6)
  })

  it('a batch cancelled from the console stops the CLI run: exit 1, nothing left queued', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const tasks = Array.from({ length: 30 }, (_, i) => ({ type: 'job', payload: { i } }))
    const file = writeJsonl(dir, 'batch.jsonl', tasks)
    const run = startPacer(['run', file, '--db', db, '--json', '--sim-latency-scale', '3'])
    const batchId = await until(() => {
      const [row] = query<{ n: number }>(
        db,
        `SELECT COUNT(*) AS n FROM tasks WHERE status='succeeded'`,
      )
      return (row?.n ?? 0) >= 2 && query<{ id: string }>(db, 'SELECT id FROM batches')[0]?.id
    })
    // The console is another engine on the same database file.
    const console = createEngine({ dbPath: db })
    try {
      await console.handlers['batches:cancel']({ batchId })
    } finally {
      await console.shutdown({ graceMs: 0 })
    }
    const r = await run.done
    expect(r.code, r.stderr).toBe(1)
    const s = JSON.parse(r.stdout) as RunSummary
    expect(s.cancelled).toBeGreaterThan(0)
    expect(query(db, `SELECT * FROM tasks WHERE status IN ('queued','running')`)).toHaveLength(0)
    expect(query(db, `SELECT * FROM claims WHERE state='running'`)).toHaveLength(0)
  })

  it('a console running on the same database leaves a `pacer run` batch to its process', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(
      dir,
      'batch.jsonl',
      Array.from({ length: 24 }, (_, i) => ({ type: 'job', payload: { i } })),
    )
    const console = createEngine({ dbPath: db })
    console.start()
    try {
      const r = await runPacer(['run', file, '--db', db, '--json', '--sim-latency-scale', '1'])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ executed: 24 })
      const workers = query<{ worker: string }>(db, 'SELECT DISTINCT worker FROM ledger')
      expect(workers).toHaveLength(1)
      expect(workers[0]!.worker).not.toBe(console.runner.workerId)
    } finally {
      await console.shutdown({ graceMs: 0 })
    }
  })

  it('--audit runs duplicates and prices them as wasted; dedup would have saved exactly that', async () => {
    const dir = tempDir()
    const task = { type: 'dup', payload: { prompt: 'the same question, asked three times' } }
    const file = writeJsonl(dir, 'dups.jsonl', [task, task, task, { type: 'solo', payload: 1 }])
    const audit = await runPacer([
      'run',
      file,
      '--db',
      join(dir, 'a.db'),
      '--audit',
      '--json',
      ...FAST,
    ])
    expect(audit.code, audit.stderr).toBe(0)
    const a = JSON.parse(audit.stdout) as RunSummary
    expect(a.executed).toBe(2)
    expect(a.duplicates).toBe(2)
    expect(a.reused).toBe(0)
    expect(a.wastedUsd).toBeGreaterThan(0)

    const dedup = await runPacer(['run', file, '--db', join(dir, 'b.db'), '--json', ...FAST])
    const d = JSON.parse(dedup.stdout) as RunSummary
    expect(d.executed).toBe(2)
    expect(d.reused).toBe(2)
    expect(d.savedUsd).toBeCloseTo(a.wastedUsd, 6)
    expect(d.costUsd! + d.savedUsd!).toBeCloseTo(a.costUsd!, 6)
  })
})

describe('pacer summary, export, forecast', () => {
  it('pacer batches lists what ran, with its counts', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const task = { type: 'a', payload: { q: 1 } }
    const file = writeJsonl(dir, 'b.jsonl', [task, task, { type: 'b', payload: 2 }])
    expect((await runPacer(['run', file, '--db', db, ...FAST])).code).toBe(0)
    const r = await runPacer(['batches', '--db', db, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const { batches } = JSON.parse(r.stdout) as {
      batches: { name: string; state: string; total: number; counts: Record<string, number> }[]
    }
    expect(batches).toHaveLength(1)
    expect(batches[0]).toMatchObject({ name: 'b.jsonl', state: 'done', total: 3 })
    expect(batches[0]!.counts).toMatchObject({ succeeded: 2, reused: 1, queued: 0 })
    const text = await runPacer(['batches', '--db', db])
    expect(text.stdout).toMatch(/b\.jsonl\s+done\s+3\s+2\s+1/)
  })

  it('summary, CSV export and forecast agree with the run', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'b.jsonl', [
      { type: '=cmd|calc', payload: { prompt: 'formula-looking type' } },
      { type: 'agent', steps: 5, payload: { prompt: 'x'.repeat(4000) } },
      { type: 'agent', steps: 5, payload: { prompt: 'x'.repeat(4000) } },
    ])
    const forecast = await runPacer(['forecast', file, '--json', '--db', db])
    expect(forecast.code, forecast.stderr).toBe(0)
    const f = JSON.parse(forecast.stdout) as {
      total: { tasks: number; distinctTasks: number; calls: number; inputTokens: number }
    }
    expect(f.total).toMatchObject({ tasks: 3, distinctTasks: 2, calls: 6 })

    const run = await runPacer(['run', file, '--db', db, '--json', ...FAST])
    const s = JSON.parse(run.stdout) as RunSummary
    // The forecast's quadratic estimate is close to what the 5-step agent really sent.
    expect(s.inputTokens).toBeGreaterThan(f.total.inputTokens * 0.7)
    expect(s.inputTokens).toBeLessThan(f.total.inputTokens * 1.3)

    const summary = JSON.parse((await runPacer(['summary', '--db', db, '--json'])).stdout) as {
      totals: { costMicros: number; inputTokens: number; executed: number; reused: number }
    }
    expect(summary.totals.inputTokens).toBe(s.inputTokens)
    expect(summary.totals).toMatchObject({ executed: 2, reused: 1 })

    const out = join(dir, 'events.csv')
    const exp = await runPacer(['export', '--db', db, '--out', out])
    expect(exp.code, exp.stderr).toBe(0)
    const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Record<string, string>[]
    expect(rows).toHaveLength(query(db, 'SELECT * FROM ledger').length)
    const billed = rows.reduce((n, r) => n + Math.round(Number(r.cost_usd || 0) * 1e6), 0)
    expect(billed).toBe(summary.totals.costMicros)
    // The formula-looking task type is neutralized, not executable in a spreadsheet.
    expect(rows.some((r) => r.task_type === "'=cmd|calc")).toBe(true)

    const bad = await runPacer([
      'export',
      '--db',
      db,
      '--out',
      join(dir, 'missing', 'dir', 'x.csv'),
    ])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/cannot write/)
  })
})

describe('pacer run: the simulated provider’s request budget', () => {
  it('--sim-rpm is on run and serve, its default stated in --help', async () => {
    for (const command of ['run', 'serve']) {
      const help = await runPacer([command, '--help'])
      expect(help.code).toBe(0)
      // (Commander wraps the description to the terminal's width.)
      expect(help.stdout).toMatch(
        /--sim-rpm <n>\s+requests per minute[^]*?0\s+= no limit\s+\(default: 10000\)/,
      )
    }
    const bad = await runPacer(['run', 'x.jsonl', '--sim-rpm', '-1'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--sim-rpm.*expected an integer ≥ 0/)
  })

  it('a budget of 30 a minute throttles a run of 40 tasks; 0 lets them all through at once', async () => {
    const dir = tempDir()
    const file = writeJsonl(
      dir,
      'b.jsonl',
      Array.from({ length: 40 }, (_, i) => ({ type: 'a', payload: i })),
    )
    const wide = ['--sim-latency-scale', '0', '--sim-capacity', '1000', '--json']
    const free = await runPacer([
      'run',
      file,
      '--db',
      join(dir, 'free.db'),
      '--sim-rpm',
      '0',
      ...wide,
    ])
    expect(free.code, free.stderr).toBe(0)
    expect(JSON.parse(free.stdout)).toMatchObject({ executed: 40, throttled: 0 })
    // 30 a minute: the first 30 pass, the rest are refused until the window moves (a minute):
    // stop the run once the refusals show, and the ledger has them.
    const db = join(dir, 'budget.db')
    const limited = startPacer(['run', file, '--db', db, '--sim-rpm', '30', ...wide])
    await until(
      () =>
        existsSync(db) &&
        query<{ n: number }>(db, `SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'throttled'`)[0]!
          .n > 0,
    )
    // Twice: the calls waiting out their retry-after are aborted, not waited for.
    limited.child.kill('SIGINT')
    // Twice: the calls waiting out their retry-after are aborted, not waited for.
    limited.child.kill('SIGINT')
    await until(() => limited.output().stderr.includes('stopping'))
    limited.child.kill('SIGINT')
    await limited.done
    expect(
      query<{ n: number }>(db, `SELECT COUNT(*) AS n FROM ledger WHERE outcome = 'executed'`)[0]!.n,
    ).toBe(30)
  })
})
