// The folder of Pacer's package.json, found from this code's own folder: src/main/cli under tsx,
// out/cli in the built CLI, <prefix>/lib/node_modules/pacer/out/cli once installed. The bundled
// example batch (resources/) and the built console (out/renderer) are found from there.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

let found: string | undefined

/** The package's root folder (where its package.json is). */
export function packageRoot(): string {
  if (found) return found
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && isPacer(manifest)) return (found = dir)
    if (dirname(dir) === dir) {
      throw new Error(`cannot find Pacer's package.json above ${__dirname}`)
    }
  }
}

function isPacer(manifest: string): boolean {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'pacer'
  } catch {
    return false
  }
}
