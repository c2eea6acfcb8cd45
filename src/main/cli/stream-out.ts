// Where an export streams: a file (`--out FILE`) or stdout (`-`), for `pacer export` and
// `pacer results` alike.
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { resolve } from 'node:path'
import { PassThrough } from 'node:stream'
import { databaseFileAt, describeDatabaseFile } from '../engine'
import { UsageError } from './common'
import { terminalSafeStream } from './terminal-text'

/** Writes what it is given to `out`, ends it, and resolves with the count of rows written. */
export type StreamWrite = (out: NodeJS.WritableStream) => Promise<{ rows: number }>

/**
 * Streams `write` into `--out` (`-` = stdout). Resolves with the rows and where they went, or null
 * when stdout's reader went away before the end (`pacer results | head`): like any filter, that
 * stops quietly.
 */
export async function streamOut(
  outOption: string,
  write: StreamWrite,
  /** The database the export reads: an --out naming it or its side files is refused. */
  database?: string,
): Promise<{ rows: number; where: string } | null> {
  if (outOption === '-') {
    const rows = await writeToStdout(write)
    return rows === null ? null : { rows, where: 'stdout' }
  }
  const path = resolve(outOption)
  if (database !== undefined) refuseDatabase(path, database)
  const out = createWriteStream(path)
  const opened = once(out, 'open').then(
    () => null,
    (err: NodeJS.ErrnoException) => err,
  )
  const failed = await opened
  if (failed) throw new UsageError(`cannot write ${path}: ${failed.code ?? failed.message}`)
  const { rows } = await write(out)
  if (!out.writableFinished) await once(out, 'finish')
  return { rows, where: path }
}

/**
 * Opening --out truncates it: pointed at the database (or its -wal, -shm or -journal file, through
 * any link, hard or symbolic) that would destroy the ledger the export is reading. Refused before
 * anything opens.
 */
export function refuseDatabase(out: string, database: string, option = '--out'): void {
  if (out === '-') return
  const suffix = databaseFileAt(out, database)
  if (suffix === null) return
  throw new UsageError(
    `${option} ${out} is ${describeDatabaseFile(suffix)}: ` +
      `writing there would destroy the ledger; give another file`,
  )
}

/**
 * Streams to process.stdout without ending it (the writers end the stream they are given, and an
 * ended stdout would swallow anything printed after): through a relay piped with `end: false`,
 * which keeps backpressure. Returns the row count, or null when stdout was closed by its reader
 * (EPIPE) before the end.
 *
 * On a terminal the relay escapes control characters as everything else the CLI prints: answers
 * and task types are a provider's and a batch file's text, and an ESC or OSC sequence in them
 * would act on the terminal. To a pipe the bytes stay exact (the reader is a program, and a file
 * export holds the same bytes); `| cat` shows them raw on purpose.
 */
async function writeToStdout(write: StreamWrite): Promise<number | null> {
  const stdout = process.stdout
  const relay = stdout.isTTY ? terminalSafeStream() : new PassThrough()
  let closed: NodeJS.ErrnoException | null = null
  const onError = (err: NodeJS.ErrnoException) => {
    closed = err
    relay.destroy(err)
  }
  stdout.on('error', onError)
  relay.pipe(stdout, { end: false })
  try {
    const { rows } = await write(relay)
    // Everything was written into the relay; wait until it has all been handed to stdout.
    if (!relay.readableEnded) await once(relay, 'end')
    if (stdout.writableNeedDrain) await once(stdout, 'drain')
    return rows
  } catch (err) {
    if ((closed as NodeJS.ErrnoException | null)?.code === 'EPIPE') return null
    throw closed ?? err
  } finally {
    relay.unpipe(stdout)
    stdout.off('error', onError)
  }
}
