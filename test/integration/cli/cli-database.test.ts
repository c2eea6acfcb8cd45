// The database file as users meet it: read only (an archived ledger, a colleague's copy), damaged,
// copied while runs go on. Real files, real `pacer` processes.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, openSync, readFileSync, writeSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runPacer, tempDir, writeJsonl, type CliResult } from '../../helpers/cli'

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
