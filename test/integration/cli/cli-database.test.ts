// The database file as users meet it: read only (an archived ledger, a colleague's copy), damaged,
// copied while runs go on. Real files, real `pacer` processes.
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, query, runPacer, tempDir, writeJsonl, type CliResult } from '../../helpers/cli'

const PACER = join(ROOT, 'bin/pacer.cjs')
const NOBODY = 65534

/**
 * `pacer ARGS` as a user who may only read the file: root is let write anything whatever the
 * mode bits, so as root the process runs as `nobody`.
 */
function runAsReader(args: string[], home: string): Promise<CliResult> {
  const asRoot = process.getuid?.() === 0
  const child = spawn(process.execPath, [PACER, ...args], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0', HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  return new Promise((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')

/** A database with one finished batch of `n` tasks, closed (its WAL folded in). */
async function finishedDb(dir: string, n = 6): Promise<{ db: string; batch: string }> {
  const batch = writeJsonl(
    dir,
    'b.jsonl',
    Array.from({ length: n }, (_, i) => ({ type: `t${i % 2}`, payload: { i } })),
  )
  const db = join(dir, 'p.db')
  const r = await runPacer(['run', batch, '--db', db, '--sim-latency-scale', '0'])
  expect(r.code).toBe(0)
  return { db, batch }
}

/** Overwrites pages in the middle of the file with noise, as a failing disk would. */
function damage(file: string): void {
  const fd = openSync(file, 'r+')
  try {
    writeSync(fd, Buffer.alloc(4096 * 4, 0xa5), 0, 4096 * 4, 4096 * 3)
  } finally {
    closeSync(fd)
  }
}

describe('a read-only database', () => {
  it('summary, batches and export read it, WAL files absent; run refuses it in one line', async () => {
    const dir = tempDir()
    const { db, batch } = await finishedDb(dir)
    const before = digest(db)
    // A finished run folds its log in and removes it: the file is the whole database.
    expect(existsSync(`${db}-wal`) || existsSync(`${db}-shm`)).toBe(false)
    chmodSync(db, 0o444)
    chmodSync(dir, 0o555)
    const home = tempDir()
    chmodSync(home, 0o777)
    try {
      const summary = await runAsReader(['summary', '--db', db, '--json'], home)
      expect(summary.stderr).toBe('')
      expect(summary.code).toBe(0)
      expect(JSON.parse(summary.stdout).byType.map((t: { runs: number }) => t.runs)).toEqual([3, 3])
      const batches = await runAsReader(['batches', '--db', db], home)
      expect(batches.code).toBe(0)
      expect(batches.stdout).toMatch(/b\.jsonl\s+done\s+6/)
      const exported = await runAsReader(['export', '--db', db, '--out', '-'], home)
      expect(exported.code).toBe(0)
      expect(exported.stdout.trim().split('\n')).toHaveLength(1 + 6)

      const run = await runAsReader(['run', batch, '--db', db], home)
      expect(run.code).toBe(3)
      expect(run.stderr.trim().split('\n')).toHaveLength(1)
      expect(run.stderr).toMatch(/p\.db: the file is read-only: this command writes to it/)
    } finally {
      chmodSync(dir, 0o755)
      chmodSync(db, 0o644)
    }
    expect(digest(db)).toBe(before)
    expect(existsSync(`${db}-wal`) || existsSync(`${db}-shm`)).toBe(false)
  })
})

// A real full file system needs a mount: a tmpfs of its own, so only as root (as CI runs).
const asRoot = process.getuid?.() === 0

describe('a full disk', () => {
  it.runIf(asRoot)(
    'every read command works on a database whose disk is full, and creates or changes nothing',
    async () => {
      const dir = tempDir()
      const { db: source } = await finishedDb(dir)
      const mount = tempDir('pacer-full-')
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount])
      try {
        const db = join(mount, 'p.db')
        writeFileSync(db, readFileSync(source))
        // Fill what is left, to the last block.
        const fd = openSync(join(mount, 'fill'), 'w')
        try {
          for (const block = Buffer.alloc(4096); ;) writeSync(fd, block)
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC')
        } finally {
          closeSync(fd)
        }
        const before = { digest: digest(db), mtimeMs: statSync(db).mtimeMs }
        const runs: [string[], (r: CliResult) => void][] = [
          [['summary', '--json'], (r) => expect(JSON.parse(r.stdout).byType).toHaveLength(2)],
          [['batches'], (r) => expect(r.stdout).toMatch(/b\.jsonl\s+done\s+6/)],
          [['check'], (r) => expect(r.stdout).toMatch(/^ok: /)],
          [['results', '--out', '-'], (r) => expect(r.stdout.trim().split('\n')).toHaveLength(6)],
          [['export', '--out', '-'], (r) => expect(r.stdout.trim().split('\n')).toHaveLength(7)],
          [['backup', '--out', join(dir, 'copy.db')], (r) => expect(r.stderr).toMatch(/backed up/)],
        ]
        for (const [args, check] of runs) {
          const r = await runPacer([...args, '--db', db])
          expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0)
          check(r)
        }
        // Nothing written: no -wal or -shm left beside it, the file's bytes and time unchanged.
        expect(readdirSync(mount).sort()).toEqual(['fill', 'p.db'])
        expect({ digest: digest(db), mtimeMs: statSync(db).mtimeMs }).toEqual(before)
      } finally {
        execFileSync('umount', [mount])
      }
    },
  )
})

describe('a damaged database', () => {
  it('run and serve refuse it in one line that says how to recover, and write nothing', async () => {
    const dir = tempDir()
    const { db, batch } = await finishedDb(dir, 40)
    damage(db)
    const before = digest(db)
    for (const args of [
      ['run', batch, '--db', db],
      ['serve', '--db', db, '--port', '0'],
    ]) {
      const r = await runPacer(args)
      expect(r.code).toBe(3)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(/the file is damaged \(.+\); nothing was written to it/)
      expect(r.stderr).toMatch(/pacer backup.*\.recover/)
    }
    expect(digest(db)).toBe(before)
    const check = await runPacer(['check', '--db', db])
    expect(check.code).toBe(3)
    expect(check.stdout).toMatch(/^damaged: /)
  })

  it('export of a damaged ledger fails with code 3 and says how many rows it wrote, never done', async () => {
    const dir = tempDir()
    const { db } = await finishedDb(dir, 1300)
    const total = query<{ n: number }>(db, 'SELECT count(*) AS n FROM ledger_rows')[0]!.n
    const leaves = query<{ pageno: number }>(
      db,
      "SELECT pageno FROM dbstat WHERE name = 'ledger_rows' AND pagetype = 'leaf' ORDER BY path",
    ).map((r) => r.pageno)
    const pageAt = (pageno: number) => 4096 * (pageno - 1)
    const patch = (file: string, offset: number, bytes: Buffer) => {
      const fd = openSync(file, 'r+')
      try {
        writeSync(fd, bytes, 0, bytes.length, offset)
      } finally {
        closeSync(fd)
      }
    }
    const exportOf = async (file: string) => {
      const out = join(dir, `${Math.random().toString(36).slice(2)}.csv`)
      const r = await runPacer(['export', '--db', file, '--out', out])
      const written = readFileSync(out, 'utf8').trim().split('\n').length - 1
      return { ...r, written }
    }
    const sound = await exportOf(db)
    expect(sound.code, sound.stderr).toBe(0)
    expect(sound.written).toBe(total)

    // A leaf whose header says it holds one cell: SQLite reads on without an error, rows short.
    const short = join(dir, 'short.db')
    writeFileSync(short, readFileSync(db))
    patch(short, pageAt(leaves[1]!) + 3, Buffer.from([0, 1]))
    const silent = await exportOf(short)
    expect(silent.written).toBeLessThan(total)
    expect(silent.code).toBe(3)
    expect(silent.stderr.trim().split('\n')).toHaveLength(1)
    expect(silent.stderr).toContain(`export incomplete: wrote ${silent.written} events row(s) to`)
    expect(silent.stderr).toMatch(/not every row could be read .*sqlite3 DAMAGED\.db \.recover/)

    // A leaf past the first 1,000 rows (in key order) turned to noise: the first page is written,
    // then it stops.
    const noisy = join(dir, 'noisy.db')
    writeFileSync(noisy, readFileSync(db))
    patch(noisy, pageAt(leaves.at(-2)!), Buffer.alloc(4096, 0xa5))
    const stopped = await exportOf(noisy)
    expect(stopped.code).toBe(3)
    expect(stopped.written).toBe(1000)
    expect(stopped.stderr).toContain('export incomplete: wrote 1000 events row(s) to')
    expect(stopped.stderr).toMatch(/SQLITE_CORRUPT/)
  })

  it('pacer check says ok for a sound file; pacer backup copies it whole', async () => {
    const dir = tempDir()
    const { db } = await finishedDb(dir)
    const ok = await runPacer(['check', '--db', db, '--json'])
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, problems: [] })
    const copy = join(dir, 'copy.db')
    const backup = await runPacer(['backup', '--db', db, '--out', copy])
    expect(backup.code).toBe(0)
    expect(backup.stderr).toMatch(/backed up .*p\.db to .*copy\.db \(\d+ pages\)/)
    const [a, b] = await Promise.all([
      runPacer(['summary', '--db', db, '--json']),
      runPacer(['summary', '--db', copy, '--json']),
    ])
    expect(JSON.parse(b.stdout).byType).toEqual(JSON.parse(a.stdout).byType)
    // Never over an existing file.
    const again = await runPacer(['backup', '--db', db, '--out', copy])
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/copy\.db exists/)
  })
})
