// Vitest's globalSetup: the whole run must leave the user's own Pacer folder (the desktop app's
// settings and the CLI's default database) as it found it. Every test runs `pacer` with a HOME of
// its own (helpers/cli.ts) and passes --db; a test that forgets one of them writes into the real
// folder, and this fails the run, naming what changed.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { defaultDataDir } from '../../src/main/engine/db'

/** Every file under `dir` (or `dir` itself when a file) with its size and mtime; {} when absent. */
export function snapshotFolder(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (path: string): void => {
    if (!existsSync(path)) return
    const st = statSync(path)
    if (!st.isDirectory()) {
      out[path] = `${st.size}@${st.mtimeMs}`
      return
    }
    out[`${path}/`] = 'dir'
    for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return out
}

/** What changed between two snapshots, one line per path ([] when nothing did). */
export function changesBetween(
  before: Record<string, string>,
  after: Record<string, string>,
): string[] {
  const paths = new Set([...Object.keys(before), ...Object.keys(after)])
  const changes: string[] = []
  for (const p of [...paths].sort()) {
    if (before[p] === after[p]) continue
    if (before[p] === undefined) changes.push(`created ${p}`)
    else if (after[p] === undefined) changes.push(`removed ${p}`)
    else changes.push(`changed ${p}`)
  }
  return changes
}

/** The user's real Pacer folder as the app and the CLI find it (this run's environment). */
export function realPacerFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const folders = [defaultDataDir('Pacer', env, process.platform, homedir())]
  if (env['PACER_DB']) folders.push(env['PACER_DB'])
  return folders
}

export default function guardRealConfig(): () => void {
  const folders = realPacerFolders()
  const before = folders.map(snapshotFolder)
  return () => {
    const changes = folders.flatMap((f, i) => changesBetween(before[i]!, snapshotFolder(f)))
    if (changes.length > 0) {
      // Vitest reports an error thrown here but still exits 0: the exit code is set as well.
      process.exitCode = 1
      throw new Error(
        `the tests touched the user's own Pacer folder (a pacer command without --db, or without ` +
          `a HOME of its own?):\n  ${changes.join('\n  ')}`,
      )
    }
  }
}
