// `pacer` under a pseudo-terminal, for what it prints when stdout is a terminal (isTTY): through
// the system's `script` (util-linux on Linux, BSD's on macOS), so no native module is needed.
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './cli'

export interface PtyResult {
  code: number | null
  /** stdout and stderr as the terminal got them, both on the one pty (LF arrives as CRLF). */
  output: string
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`

/** Runs `pacer ARGS` with stdin, stdout and stderr on a pseudo-terminal; HOME of its own. */
export function runPacerInPty(args: string[], env: NodeJS.ProcessEnv = {}): Promise<PtyResult> {
  const home = env['HOME'] ?? mkdtempSync(join(tmpdir(), 'pacer-home-'))
  const argv = [process.execPath, join(ROOT, 'bin/pacer.cjs'), ...args]
  const scriptArgs =
    process.platform === 'darwin'
      ? ['-q', '/dev/null', ...argv]
      : ['-qfec', argv.map(quote).join(' '), '/dev/null']
  const child = spawn('script', scriptArgs, {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0', HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const chunks: Buffer[] = []
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => chunks.push(d))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  return new Promise((resolve, reject) => {
    child.on('error', (err) =>
      reject(new Error(`cannot start script(1) for a pty: ${err.message}`)),
    )
    child.on('close', (code) => {
      if (stderr) reject(new Error(`script(1) failed: ${stderr}`))
      else resolve({ code, output: Buffer.concat(chunks).toString('utf8') })
    })
  })
}
