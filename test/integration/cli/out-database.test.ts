// `pacer export --out` and `pacer results --out` pointed at the database they read (or its -wal,
// or a link to it) would truncate it to 0 bytes: refused with a usage error (2) naming it, and
// the database is byte for byte what it was and still passes `pacer check`.
import { readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runPacer, tempDir, writeJsonl } from '../../helpers/cli'

describe('an --out that names the database', () => {
  it('is refused by export and results, and the database is left whole', async () => {
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

    const targets: [string, RegExp][] = [
      [db, /the database itself/],
      [`${db}-wal`, /-wal file/],
      [link, /the database itself/],
      [join(dir, '.', 'pacer.db'), /the database itself/],
    ]
    for (const [out, says] of targets) {
      for (const command of [['export'], ['export', '--kind', 'summary'], ['results']]) {
        const r = await runPacer([...command, '--db', db, '--out', out])
        expect(r.code, `${command.join(' ')} --out ${out}: ${r.stderr}`).toBe(2)
        expect(r.stderr).toMatch(says)
        expect(r.stderr).toMatch(/destroy the ledger/)
      }
    }
    expect(readFileSync(db).equals(before)).toBe(true)
    const check = await runPacer(['check', '--db', db])
    expect(check.code, check.stderr).toBe(0)
    // Another file is still fine.
    const ok = await runPacer(['export', '--db', db, '--out', join(dir, 'ledger.csv')])
    expect(ok.code, ok.stderr).toBe(0)
  })
})
