// Which file of a database a path is: the file itself or a companion SQLite keeps beside it
// (-wal, -shm, -journal). Every writer of a file the operator names (export, results, backup, the
// desktop's exports) asks first: opening such a path for writing, or renaming onto it, destroys
// the ledger. Compared by what the path ends up being, not how it is spelled: relative paths,
// symlinks (dangling ones too: a companion that does not exist yet), and hard links (same inode).
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'

/** The files of a database, in the order they are named: the file, then its companions. */
export const DATABASE_SUFFIXES = ['', '-wal', '-shm', '-journal'] as const

/** The suffix of the database file `path` is ('' = the database itself), or null: another file. */
export function databaseFileAt(
  path: string,
  database: string,
): (typeof DATABASE_SUFFIXES)[number] | null {
  const target = finalPath(path)
  const db = finalPath(database)
  const targetId = fileId(target)
  for (const suffix of DATABASE_SUFFIXES) {
    if (target === db + suffix) return suffix
    const id = fileId(db + suffix)
    if (id !== null && id === targetId) return suffix
  }
  return null
}

/** Says which file of the database `path` is, for a refusal: "the database itself", "its -wal file". */
export function describeDatabaseFile(suffix: (typeof DATABASE_SUFFIXES)[number]): string {
  return suffix === '' ? 'the database itself' : `the database's ${suffix} file`
}

/**
 * Where `path` leads once every link is followed, even to a file that does not exist yet (where
 * a write would create it); its folder by its real path.
 */
function finalPath(path: string): string {
  let current = resolve(path)
  for (let hops = 0; hops < 40; hops++) {
    try {
      return realpathSync(current)
    } catch {
      // Missing, or a dangling link: follow the link by hand, else settle on the folder's path.
    }
    let link: string | null = null
    try {
      if (lstatSync(current).isSymbolicLink()) link = readlinkSync(current)
    } catch {
      link = null
    }
    if (link === null) {
      try {
        return join(realpathSync(dirname(current)), basename(current))
      } catch {
        return current
      }
    }
    current = resolve(dirname(current), link)
  }
  return current
}

/** Device and inode of an existing file, as one key; null when there is none. */
function fileId(path: string): string | null {
  try {
    const s = statSync(path, { bigint: true })
    return `${s.dev}:${s.ino}`
  } catch {
    return null
  }
}
