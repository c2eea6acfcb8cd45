// The errors a command throws to choose its exit code, apart from common.ts so that `pacer --help`
// (index.ts) can map them without loading the engine.

/** Bad input or usage: one clear line on stderr and exit code 2. */
export class UsageError extends Error {}

/** The database or the disk failed us: one clear line on stderr and exit code 3. */
export class DatabaseError extends Error {}

/** SQLite's and the file system's errors about the database file or the disk under it. */
const STORAGE_ERRNO = new Set(['ENOSPC', 'EROFS', 'EDQUOT', 'EIO'])

/** Whether an error thrown by a command is the database's or the disk's (exit code 3). */
export function isStorageError(err: unknown): err is Error & { code: string } {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code !== 'string') return false
  return code.startsWith('SQLITE_') || STORAGE_ERRNO.has(code)
}
