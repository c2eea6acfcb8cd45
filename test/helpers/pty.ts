// `pacer` under a pseudo-terminal, for what it prints when stdout is a terminal (isTTY): through
// the system's `script` (util-linux on Linux, BSD's on macOS), so no native module is needed.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, hermeticEnv } from './cli'

export interface PtyResult {
  code: number | null
  /** stdout and stderr as the terminal got them, both on the one pty (LF arrives as CRLF). */
  output: string
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`

/** Runs `pacer ARGS` with stdin, stdout and stderr on a pseudo-terminal; HOME of its own. */
export function runPacerInPty(args: string[], env: NodeJS.ProcessEnv = {}): Promise<PtyResult> {
  const argv = [process.execPath, join(ROOT, 'bin/pacer.cjs'), ...args]
  const scriptArgs =
    process.platform === 'darwin'
      ? ['-q', '/dev/null', ...argv]
      : ['-qfec', argv.map(quote).join(' '), '/dev/null']
  const child = spawn('script', scriptArgs, {
    cwd: ROOT,
    env: hermeticEnv(env),
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

/**
 * Starts `pacer ARGS` on a pseudo-terminal and keeps its keyboard: `type('\u0003')` is a Ctrl-C as
 * the terminal's line discipline delivers it (SIGINT to the foreground process group).
 */
export function startPacerInPty(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): {
  /** Keys typed into the terminal. */
  type: (keys: string) => void
  /** What the terminal got so far. */
  output: () => string
  /** The pid of `pacer` itself (the node process under script(1) and its shell). */
  pacerPid: () => number | null
  done: Promise<PtyResult>
} {
  const argv = [process.execPath, join(ROOT, 'bin/pacer.cjs'), ...args]
  const child = spawn('script', ['-qfec', argv.map(quote).join(' '), '/dev/null'], {
    cwd: ROOT,
    env: hermeticEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const chunks: Buffer[] = []
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => chunks.push(d))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const output = () => Buffer.concat(chunks).toString('utf8')
  const done = new Promise<PtyResult>((resolve, reject) => {
    child.on('error', (err) =>
      reject(new Error(`cannot start script(1) for a pty: ${err.message}`)),
    )
    child.on('close', (code) => {
      child.stdin.destroy()
      if (stderr) reject(new Error(`script(1) failed: ${stderr}`))
      else resolve({ code, output: output() })
    })
  })
  const pacerPid = (): number | null => {
    // Down the process tree from script(1): the first node process is pacer.
    let pids = [child.pid!]
    for (let depth = 0; depth < 4 && pids.length; depth++) {
      const next: number[] = []
      for (const pid of pids) {
        let kids: string
        try {
          kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        } catch {
          continue
        }
        for (const k of kids.split(' ').filter(Boolean).map(Number)) {
          const cmd = readFileSync(`/proc/${k}/cmdline`, 'utf8')
          if (cmd.startsWith(process.execPath) && cmd.includes('pacer.cjs')) return k
          next.push(k)
        }
      }
      pids = next
    }
    return null
  }
  return { type: (keys) => child.stdin.write(keys), output, pacerPid, done }
}

/**
 * The screen a terminal shows for `output`, line by line, for the controls a progress bar uses:
 * CR, LF, erase line (CSI 2K), erase right (CSI K / 0K), cursor to a column (CSI n G); other
 * escape sequences (cursor save/restore and visibility, line wrapping) move nothing here.
 */
export function terminalScreen(output: string): string[] {
  const lines: string[][] = [[]]
  let row = 0
  let col = 0
  // eslint-disable-next-line no-control-regex -- the controls are what is parsed
  const token = /\r|\n|\u001b\[(\d*)([A-Za-z])|\u001b\[\?\d+[hl]|\u001b[78]|[^\r\n\u001b]/gu
  for (const m of output.matchAll(token)) {
    const line = lines[row]!
    if (m[0] === '\r') col = 0
    else if (m[0] === '\n') {
      row++
      col = 0
      lines[row] ??= []
    } else if (m[2] === 'K') {
      if (m[1] === '2') line.length = 0
      else line.length = Math.min(line.length, col)
    } else if (m[2] === 'G') col = Math.max(0, Number(m[1] || '1') - 1)
    else if (m[0].startsWith('\u001b')) continue
    else {
      while (line.length < col) line.push(' ')
      line[col++] = m[0]
    }
  }
  return lines.map((l) => l.join('').trimEnd())
}
