import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import Database from 'better-sqlite3'

export const ROOT = resolve(__dirname, '../..')
const PACER = join(ROOT, 'bin/pacer.cjs')

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * A child `pacer`'s environment, hermetic: a HOME of its own unless the test gives one, and no
 * variable that would send a command without --db to the user's own database or ~/.config.
 */
export function hermeticEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FORCE_COLOR: '0',
    HOME: env['HOME'] ?? mkdtempSync(join(tmpdir(), 'pacer-home-')),
    XDG_CONFIG_HOME: undefined,
    PACER_DB: undefined,
    ...env,
  }
}

/** Starts `pacer ARGS` as a real child process (the same entry point as `npx pacer`). */
export function startPacer(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): {
  child: ChildProcess
  done: Promise<CliResult>
  /** What the process printed so far. */
  output: () => { stdout: string; stderr: string }
} {
  const child = spawn(process.execPath, [PACER, ...args], {
    cwd: ROOT,
    env: hermeticEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const done = new Promise<CliResult>((resolveDone) => {
    child.on('close', (code, signal) => resolveDone({ code, signal, stdout, stderr }))
  })
  return { child, done, output: () => ({ stdout, stderr }) }
}

export function runPacer(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return startPacer(args, env).done
}

export function tempDir(prefix = 'pacer-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export function writeJsonl(dir: string, name: string, tasks: unknown[]): string {
  const path = join(dir, name)
  writeFileSync(path, tasks.map((t) => JSON.stringify(t)).join('\n') + '\n')
  return path
}

/** Reads the test database directly (read-only), as an auditor would. */
export function query<T>(dbPath: string, sql: string, ...args: unknown[]): T[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    return db.prepare(sql).all(...args) as T[]
  } finally {
    db.close()
  }
}

export function shuffle<T>(items: T[], seed = 1): T[] {
  const out = [...items]
  let s = seed
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    const j = s % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** `n` distinct tasks whose prompts start with `proc-` (a fake vendor counts processes by it). */
export function prefixedBatch(dir: string, proc: string, n: number): string {
  const tasks = Array.from({ length: n }, (_, i) => ({
    type: 'classify',
    payload: { prompt: `${proc}-task-${i}` },
  }))
  return writeJsonl(dir, `${proc}.jsonl`, tasks)
}

/** `pacer run FILE --db DB --json` on openai-compatible, model `local` (vendorDatabase's DB). */
export function runOnVendor(
  file: string,
  db: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
): ReturnType<typeof startPacer> {
  return startPacer(
    [
      'run',
      file,
      '--db',
      db,
      '--json',
      '--provider',
      'openai-compatible',
      '--model',
      'local',
      ...extra,
    ],
    env,
  )
}

export { until } from './until'
