// Paths that are no file to read: a FIFO blocks every open until a writer comes, /dev/zero reads
// without end, /proc's files are the kernel's. As `--db` or as an agent module each is refused in
// one line, at once. Real `pacer` processes, a real FIFO (mkfifo) and the real /dev/zero.
import { execFileSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startPacer, tempDir, writeJsonl, type CliResult } from '../../helpers/cli'

/** `pacer ARGS`, killed after 15 s: a process that blocks on the path fails the test, not hangs it. */
async function runBounded(args: string[]): Promise<CliResult & { ms: number }> {
  const started = Date.now()
  const { child, done } = startPacer(args)
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
  const r = await done
  clearTimeout(timer)
  return { ...r, ms: Date.now() - started }
}

function fifo(dir: string, name: string): string {
  const path = join(dir, name)
  execFileSync('mkfifo', [path])
  return path
}

describe('--db that is no database file', () => {
  it('a FIFO, /dev/zero, a folder or a path under /proc: exit 3 and one line, at once', async () => {
    const dir = tempDir()
    const batch = writeJsonl(dir, 'b.jsonl', [{ type: 't', payload: { n: 1 } }])
    const pipe = fifo(dir, 'p.db')
    const cases: [string[], RegExp][] = [
      [['run', batch, '--db', pipe], /p\.db is a FIFO \(named pipe\), not a database file/],
      [['summary', '--db', pipe], /p\.db is a FIFO \(named pipe\), not a database file/],
      [['check', '--db', pipe], /p\.db is a FIFO \(named pipe\), not a database file/],
      [
        ['run', batch, '--db', '/dev/zero'],
        /\/dev\/zero is under \/dev, whose files are the kernel's/,
      ],
      [['run', batch, '--db', '/proc/pacer.db'], /\/proc\/pacer\.db is under \/proc/],
      [['export', '--db', '/proc/self/status', '--out', '-'], /is under \/proc/],
      [['run', batch, '--db', dir], /is a folder, not a database file/],
    ]
    for (const [args, line] of cases) {
      const r = await runBounded(args)
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(3)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(line)
    }
  })
})

describe('an agent module that is no regular file', () => {
  it('a FIFO or a link to /dev/zero: exit 2 and one line naming it, nothing run', async () => {
    const dir = tempDir()
    const batch = writeJsonl(dir, 'b.jsonl', [{ type: 't', payload: { n: 1 } }])
    const zero = join(dir, 'zero.mjs')
    symlinkSync('/dev/zero', zero)
    for (const [module, kind] of [
      [fifo(dir, 'agent.mjs'), 'a FIFO (named pipe)'],
      [zero, 'a character device'],
    ] as const) {
      const r = await runBounded(['run', batch, '--db', join(dir, 'p.db'), '--agents', module])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr.trim()).toBe(`pacer: agent module ${module}: is ${kind}, not a regular file`)
    }
  })
})
