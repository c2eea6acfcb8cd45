// bin/pacer.cjs runs the built CLI when it is current and the TypeScript sources otherwise. Checked
// on a stand-in package (a bundle and a source that each say which one ran), with the real
// bin/pacer.cjs and the real tsx.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { ROOT, tempDir } from '../../helpers/cli'

let root: string

function which(env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(process.execPath, [join(root, 'bin/pacer.cjs'), 'x'], {
    encoding: 'utf8',
    env: { ...process.env, PACER_FROM_SOURCE: '', ...env },
  })
  expect(r.stderr).toBe('')
  return r.stdout.trim()
}

/** Sets a file's modification time to `seconds` after the epoch. */
const age = (file: string, seconds: number) => utimesSync(join(root, file), seconds, seconds)

beforeEach(() => {
  root = tempDir('pacer-bin-')
  mkdirSync(join(root, 'bin'))
  cpSync(join(ROOT, 'bin/pacer.cjs'), join(root, 'bin/pacer.cjs'))
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'))
  mkdirSync(join(root, 'src/main/cli'), { recursive: true })
  writeFileSync(
    join(root, 'src/main/cli/index.ts'),
    "export async function main(argv: string[]): Promise<number> {\n  console.log(`source ${argv.join(' ')}`)\n  return 0\n}\n",
  )
  mkdirSync(join(root, 'out/cli'), { recursive: true })
  writeFileSync(
    join(root, 'out/cli/pacer.mjs'),
    'export async function main(argv) {\n  console.log(`built ${argv.join(" ")}`)\n  return 0\n}\n',
  )
  writeFileSync(join(root, 'out/cli/inputs.json'), '["src/main/cli/index.ts"]\n')
  age('src/main/cli/index.ts', 1_000_000)
  age('out/cli/pacer.mjs', 2_000_000)
  return () => rmSync(root, { recursive: true, force: true })
})

describe('bin/pacer.cjs', () => {
  it('runs the built CLI when no source it was built from is newer', () => {
    expect(which()).toBe('built x')
  })

  it('runs the sources when one is newer than the build, or is gone', () => {
    age('src/main/cli/index.ts', 3_000_000)
    expect(which()).toBe('source x')
    writeFileSync(join(root, 'out/cli/inputs.json'), '["src/main/cli/gone.ts"]\n')
    expect(which()).toBe('source x')
  })

  it('runs the sources with no build, or with PACER_FROM_SOURCE=1', () => {
    expect(which({ PACER_FROM_SOURCE: '1' })).toBe('source x')
    rmSync(join(root, 'out'), { recursive: true })
    expect(which()).toBe('source x')
  })

  it('an installed package (no src/) runs the build without checking', () => {
    rmSync(join(root, 'src'), { recursive: true })
    rmSync(join(root, 'out/cli/inputs.json'))
    expect(which()).toBe('built x')
  })
})
