// The exit code says what happened, whatever agent code does to the process: a module whose
// top-level await never settles, a handler that calls process.exit(0), a handler that never
// settles and a Ctrl-C (and a second one). Real `pacer run` processes on the simulated provider.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { query, runPacer, startPacer, tempDir, until, writeJsonl } from '../../helpers/cli'

const SIM = ['--sim-latency-scale', '0.05']

function batch(dir: string, n = 20): string {
  return writeJsonl(
    dir,
    'b.jsonl',
    Array.from({ length: n }, (_, i) => ({ type: 't', payload: { i } })),
  )
}

function agent(dir: string, name: string, source: string): string {
  const path = join(dir, name)
  writeFileSync(path, source)
  return path
}

const CHAT = "await ctx.chat({ messages: [{ role: 'user', content: 'task ' + task.payload.i }] })"

const statuses = (db: string) =>
  Object.fromEntries(
    query<{ status: string; n: number }>(
      db,
      'SELECT status, count(*) AS n FROM tasks GROUP BY status',
    ).map((r) => [r.status, r.n]),
  )

describe('the exit code never says done with work left', () => {
  it('an agent module whose top-level await never settles: 4 and one line, not 0', async () => {
    const dir = tempDir()
    const mod = agent(
      dir,
      'hang.mjs',
      'await new Promise(() => {})\nexport default { async t() { return 1 } }\n',
    )
    const r = await runPacer([
      'run',
      batch(dir),
      '--agents',
      mod,
      '--db',
      join(dir, 'p.db'),
      ...SIM,
    ])
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(
      /pacer: the process ended before the command finished .*top-level await/,
    )
  }, 60_000)

  it('a handler that calls process.exit(0) fails its own task; the others run, and the code is 1', async () => {
    const dir = tempDir()
    const mod = agent(
      dir,
      'exit.mjs',
      `export default { async t(task, ctx) { ${CHAT}; if (task.payload.i === 3) process.exit(0); return task.payload.i } }\n`,
    )
    const db = join(dir, 'p.db')
    const r = await runPacer(['run', batch(dir), '--agents', mod, '--db', db, ...SIM])
    expect(r.code).toBe(1)
    expect(r.stdout + r.stderr).toMatch(/process\.exit\(0\) was called while pacer was running/)
    expect(statuses(db)).toEqual({ succeeded: 19, failed: 1 })
  }, 60_000)

  it('a handler that never settles: Ctrl-C twice ends the run at once with 130, every task left to resume', async () => {
    const dir = tempDir()
    const mod = agent(
      dir,
      'never.mjs',
      `export default { async t(task, ctx) { ${CHAT}; return new Promise(() => {}) } }\n`,
    )
    const db = join(dir, 'p.db')
    const run = startPacer(['run', batch(dir, 8), '--agents', mod, '--db', db, ...SIM])
    // Every handler has had its call answered and now waits on nothing.
    await until(
      () => query<{ n: number }>(db, 'SELECT count(*) AS n FROM ledger')[0]!.n >= 6,
      30_000,
    )
    run.child.kill('SIGINT')
    await until(() => /stopping: no new calls/.test(run.output().stderr), 10_000)
    run.child.kill('SIGINT')
    const r = await run.done
    expect(r.code).toBe(130)
    expect(r.stderr).toMatch(/aborting/)
    const left = statuses(db)
    expect(left['failed'] ?? 0).toBe(0)
    expect(left['succeeded'] ?? 0).toBe(0)
  }, 60_000)

  it('a handler that never settles: one Ctrl-C ends the run with 130 once the grace is over, not 0', async () => {
    const dir = tempDir()
    const mod = agent(
      dir,
      'never.mjs',
      `export default { async t(task, ctx) { ${CHAT}; return new Promise(() => {}) } }\n`,
    )
    const db = join(dir, 'p.db')
    const run = startPacer(['run', batch(dir, 4), '--agents', mod, '--db', db, ...SIM])
    await until(
      () => query<{ n: number }>(db, 'SELECT count(*) AS n FROM ledger')[0]!.n >= 4,
      30_000,
    )
    run.child.kill('SIGINT')
    const r = await run.done
    expect(r.code).toBe(130)
    expect(statuses(db)['failed'] ?? 0).toBe(0)
  }, 90_000)
})
