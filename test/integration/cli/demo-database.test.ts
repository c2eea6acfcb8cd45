// A newcomer's first commands lead forward: `pacer demo` writes to the database the other commands
// (and the console) read by default, and an empty or absent database's hint names a command that
// fills that same database. Hermetic: every command runs with a HOME of its own, no $PACER_DB.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runPacer, tempDir } from '../../helpers/cli'

describe('pacer demo and the empty-state hints', () => {
  it('the hint on an absent default database leads to the demo, and the demo fills it', async () => {
    const home = tempDir('pacer-demo-home-')
    const env = { HOME: home }
    const defaultDb = join(home, '.config', 'Pacer', 'pacer.db')

    const before = await runPacer(['summary'], env)
    expect(before.code).not.toBe(0)
    expect(before.stderr).toContain(`no Pacer database at ${defaultDb}`)
    // The hint names commands without --db: they write where summary reads.
    expect(before.stderr).toContain('pacer demo for the bundled example')
    expect(before.stderr).not.toContain('--db')

    const demo = await runPacer(['demo'], env)
    expect(demo.code, demo.stderr).toBe(0)
    expect(demo.stderr).toContain(`Ledger: ${defaultDb}`)
    expect(demo.stderr).toContain('the default database')
    expect(demo.stdout).toContain('npm start (desktop) or npx pacer serve\n')
    expect(existsSync(defaultDb)).toBe(true)

    const batches = await runPacer(['batches', '--json'], env)
    expect(batches.code, batches.stderr).toBe(0)
    const { batches: list } = JSON.parse(batches.stdout) as {
      batches: { name: string; state: string; total: number }[]
    }
    expect(list).toEqual([
      expect.objectContaining({ name: 'demo.jsonl', state: 'done', total: 56 }),
    ])
    const summary = await runPacer(['summary'], env)
    expect(summary.stdout).toMatch(/TOTAL\s+56/)
  }, 120_000)

  it('with --db, the demo and every hint name that database', async () => {
    const dir = tempDir()
    const db = join(dir, 'mine.db')
    const absent = await runPacer(['batches', '--db', db])
    expect(absent.stderr).toContain(`pacer demo --db ${db} for the bundled example`)
    expect(absent.stderr).toContain(`pacer run FILE.jsonl --db ${db}`)

    // An existing, empty database (a forecast creates none; a run of an empty file neither).
    const empty = join(dir, 'empty.db')
    const { openDatabase } = await import('../../../src/main/engine/db')
    openDatabase(empty).close()
    for (const command of ['summary', 'batches']) {
      const r = await runPacer([command, '--db', empty])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain(`pacer demo --db ${empty} for the bundled example`)
      expect(r.stdout).not.toContain('npm run demo')
    }
  }, 60_000)
})
