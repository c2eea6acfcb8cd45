// Every writer of a file the operator names (`pacer export --out`, `pacer results --out`,
// `pacer backup --out`) refuses the database it reads and its companions (-wal, -shm, -journal),
// however the path is spelled: a symlink (one to a companion not there yet too), a hard link
// (same inode), a relative path. Writing there would truncate the ledger, or leave a file SQLite
// reads as the ledger's journal. Refused with a usage error (2) naming it; the database is byte
// for byte what it was, still passes `pacer check`, and no companion was created.
import { existsSync, linkSync, readFileSync, symlinkSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runPacer, tempDir, writeJsonl } from '../../helpers/cli'

describe('an --out that names the database or a companion of it', () => {
  it('is refused by export, results and backup, and the database is left whole', async () => {
    const dir = tempDir()
    const db = join(dir, 'pacer.db')
    const file = writeJsonl(dir, 'b.jsonl', [
      { type: 'summarize', payload: { prompt: 'keep the ledger' } },
      { type: 'summarize', payload: { prompt: 'and its answers' } },
    ])
    const run = await runPacer(['run', file, '--db', db, '--sim-latency-scale', '0.02'])
    expect(run.code, run.stderr).toBe(0)
    const before = readFileSync(db)
    const link = join(dir, 'link.db')
    symlinkSync(db, link)
    const hard = join(dir, 'hard.db')
    linkSync(db, hard)
    // A link to the journal, which does not exist (the database is in WAL mode, and closed).
    const journalLink = join(dir, 'journal-link')
    symlinkSync(`${db}-journal`, journalLink)
    const linkedDir = join(dir, 'elsewhere')
    symlinkSync(dir, linkedDir)

    const targets: [string, RegExp][] = [
      [db, /the database itself/],
      [`${db}-wal`, /-wal file/],
      [`${db}-shm`, /-shm file/],
      [`${db}-journal`, /-journal file/],
      [link, /the database itself/],
      [hard, /the database itself/],
      [journalLink, /-journal file/],
      [join(linkedDir, 'pacer.db-wal'), /-wal file/],
      [join(dir, '.', 'pacer.db'), /the database itself/],
      // Relative to the process's folder (the tests run pacer in the repository).
      [relative(ROOT, db), /the database itself/],
    ]
    // Every path for export and backup; results and the summary export share export's check.
    const some = new Set([db, hard, journalLink])
    for (const [out, says] of targets) {
      const commands = [['export'], ['backup']]
      if (some.has(out)) commands.push(['results'], ['export', '--kind', 'summary'])
      for (const command of commands) {
        const r = await runPacer([...command, '--db', db, '--out', out])
        expect(r.code, `${command.join(' ')} --out ${out}: ${r.stderr}`).toBe(2)
        expect(r.stderr).toMatch(says)
        expect(r.stderr).toMatch(/destroy the ledger/)
      }
    }
    expect(readFileSync(db).equals(before)).toBe(true)
    for (const suffix of ['-wal', '-shm', '-journal']) expect(existsSync(db + suffix)).toBe(false)
    const check = await runPacer(['check', '--db', db])
    expect(check.code, check.stderr).toBe(0)
    // Another file is still fine.
    const ok = await runPacer(['export', '--db', db, '--out', join(dir, 'ledger.csv')])
    expect(ok.code, ok.stderr).toBe(0)
    const copy = await runPacer(['backup', '--db', db, '--out', join(dir, 'copy.db')])
    expect(copy.code, copy.stderr).toBe(0)
  }, 600_000)
})
