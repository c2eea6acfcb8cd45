// Reading `pacer run`'s batch file at the edges: a file wrong as a whole is one usage line before
// the database opens, bad lines are counted with the first of them shown, and a big file gets a
// progress bar while it is read.
import { createReadStream } from 'node:fs'
import cliProgress from 'cli-progress'
import type { LineError } from '../../shared/contract'
import { UsageError } from './common'
import { say } from './terminal-text'

/** A file that cannot be read, or has nothing but blanks, is one usage line. */
export async function checkReadable(path: string): Promise<void> {
  try {
    if (await isBlank(path)) throw new UsageError(`${path}: the file is empty: no tasks`)
  } catch (err) {
    if (err instanceof UsageError) throw err
    const e = err as NodeJS.ErrnoException
    const why =
      e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a folder' : e.message
    throw new UsageError(`cannot read ${path}: ${why}`)
  }
}

/** Reads only as far as the first character that is not blank (or a byte order mark). */
async function isBlank(path: string): Promise<boolean> {
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    if (!/^[\s\uFEFF]*$/.test((chunk as Buffer).toString('utf8'))) return false
  }
  return true
}

/** The first problems of a file to show, and how many there were (a file may have millions). */
export class LineErrorLog {
  readonly shown: LineError[] = []
  count = 0
  /** Tasks refused only because no model was given for the default provider. */
  unnamedModel = 0

  add(e: LineError): void {
    this.count++
    if (e.field === 'model' && e.message.startsWith('required: no default model')) {
      this.unnamedModel++
    }
    if (this.shown.length < SHOWN_ERRORS) this.shown.push(e)
  }
}

const SHOWN_ERRORS = 50

/** A progress bar for reading a big file on a terminal (a million lines take seconds). */
export function readingBar(opts: { json?: boolean }): {
  update: (read: number, total: number) => void
  stop: () => void
} {
  let bar: cliProgress.SingleBar | null = null
  const mb = (n: number) => (n / 1e6).toFixed(1)
  return {
    update: (read, total) => {
      if (!process.stderr.isTTY || opts.json || total < READ_BAR_BYTES) return
      if (!bar) {
        bar = new cliProgress.SingleBar(
          {
            format: 'reading {bar} {percentage}% | {read} of {size} MB',
            hideCursor: true,
            clearOnComplete: true,
            stream: process.stderr,
          },
          cliProgress.Presets.shades_classic,
        )
        bar.start(total, 0, { read: mb(0), size: mb(total) })
      }
      bar.update(read, { read: mb(read), size: mb(total) })
    },
    stop: () => bar?.stop(),
  }
}

const READ_BAR_BYTES = 4_000_000

/** Reports every bad line and stops with exit code 2: nothing is queued. */
export function rejectLines(
  file: string,
  errors: LineErrorLog,
  valid: number,
  lines: number,
): never {
  reportLineErrors(file, errors)
  throw new UsageError(
    `${file}: ${lines} invalid line(s); nothing was queued` +
      (valid > 0 ? ' (use --skip-invalid to queue the valid ones)' : ''),
  )
}

export function reportLineErrors(file: string, errors: LineErrorLog): void {
  for (const e of errors.shown) {
    say.err(`${file}:${e.line}: ${e.field ? `${e.field}: ` : ''}${e.message}\n`)
  }
  if (errors.count > errors.shown.length) {
    say.err(`... and ${errors.count - errors.shown.length} more\n`)
  }
}
