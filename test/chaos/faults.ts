/**
 * The chaos run's faults on the database: a writer that holds the write lock for a while, and a
 * disk that fills up. The disk is a small tmpfs mounted for the run (a real ENOSPC for every
 * process on the database) filled by a ballast file and emptied again; where a tmpfs cannot be
 * mounted (not root, no mount namespace) the run says so and goes on without that fault.
 */
import { execFileSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'

/** Holds the database's write lock for `ms`, as a long transaction of another program would. */
export async function holdWriteLock(dbPath: string, ms: number): Promise<boolean> {
  const db = new Database(dbPath, { timeout: 10_000 })
  try {
    db.exec('BEGIN IMMEDIATE')
    await new Promise((resolve) => setTimeout(resolve, ms))
    db.exec('COMMIT')
    return true
  } catch {
    // Could not get the lock within the timeout (the disk was full, say): no fault this time.
    return false
  } finally {
    db.close()
  }
}

export interface Disk {
  /** Where the database lives. */
  dir: string
  /** Fills the disk for `ms`, then frees it. False when this disk cannot be filled. */
  fill(ms: number): Promise<boolean>
  /** Whether fill() can do anything here, and if not, why. */
  readonly fillable: boolean
  readonly why: string
  release(): void
}

/** A tmpfs of `megabytes` at `dir` if one can be mounted, else a plain directory. */
export function prepareDisk(dir: string, megabytes = 64): Disk {
  mkdirSync(dir, { recursive: true })
  let mounted = false
  let why = 'a tmpfs of its own'
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], {
      stdio: 'ignore',
    })
    mounted = true
  } catch {
    why = 'skipped: no tmpfs could be mounted (needs root)'
  }
  const ballast = join(dir, 'ballast')
  return {
    dir,
    fillable: mounted,
    why,
    async fill(ms) {
      if (!mounted) return false
      fillUp(ballast)
      await new Promise((resolve) => setTimeout(resolve, ms))
      rmSync(ballast, { force: true })
      return true
    },
    release() {
      rmSync(ballast, { force: true })
      if (mounted) execFileSync('umount', ['-l', dir], { stdio: 'ignore' })
    },
  }
}

/** Writes zeros until the filesystem says ENOSPC. */
function fillUp(path: string): void {
  const fd = openSync(path, 'w')
  const block = Buffer.alloc(64 * 1024)
  try {
    for (;;) {
      const { bavail } = statfsSync(path)
      if (bavail === 0) break
      writeSync(fd, block)
    }
  } catch {
    // ENOSPC: full
  } finally {
    closeSync(fd)
  }
}
