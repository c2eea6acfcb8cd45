// When a read-only open cannot keep SQLite's -shm index beside the file (a folder the user may not
// write, a full disk), the database is read from the file alone (index.ts's walSnapshot).
import { statfsSync } from 'node:fs'
import { dirname } from 'node:path'

/** SQLite's errors that say the -shm index cannot be created, sized or mapped here. */
export function isUnopenableWal(err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return (
    typeof code === 'string' &&
    /^SQLITE_(READONLY|CANTOPEN|FULL|IOERR_SHMSIZE|IOERR_SHMOPEN|IOERR_SHMMAP)/.test(code)
  )
}

/** Whether the file system under `file` has room for a -shm index (32 KiB, and some slack). */
export function roomForShm(file: string): boolean {
  try {
    const fs = statfsSync(dirname(file))
    return fs.bavail * fs.bsize >= 256 * 1024
  } catch {
    return true // no answer: let SQLite try, and fall back on its error
  }
}

/**
 * The better-sqlite3 binding every open loads: the caller's, else $PACER_NATIVE_BINDING, which the
 * desktop app's `pacer` launcher (resources/bin/pacer) sets to the Electron build it runs on.
 */
export function bindingOf(opts: { nativeBinding?: string }): string | undefined {
  return opts.nativeBinding ?? (process.env['PACER_NATIVE_BINDING'] || undefined)
}
