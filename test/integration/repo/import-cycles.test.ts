/**
 * The cycle check that `npm test` runs (scripts/check-cycles.mjs) bites: a planted runtime cycle
 * fails it and names the files; a type-only import that points back, or a dynamic import(), does
 * not count; the sources themselves have none.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

function check(files?: Record<string, string>): { status: number | null; out: string } {
  let dir = 'src'
  if (files) {
    dir = mkdtempSync(join(tmpdir(), 'pacer-cycles-'))
    dirs.push(dir)
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  }
  const r = spawnSync('node', ['scripts/check-cycles.mjs', dir], { encoding: 'utf8' })
  return { status: r.status, out: r.stdout + r.stderr }
}

describe('the import cycle check', () => {
  it('fails on a runtime cycle and names its files', () => {
    const r = check({
      'a.ts': "import { b } from './b'\nexport const a = (): number => b() + 1\n",
      'b.ts': "import { a } from './a'\nexport const b = (): number => (a ? 1 : 0)\n",
      'c.ts': "import { a } from './a'\nexport const c = a\n",
    })
    expect(r.status).toBe(1)
    expect(r.out).toMatch(/1 import cycle:/)
    expect(r.out).toMatch(/a\.ts/)
    expect(r.out).toMatch(/b\.ts/)
  })

  it('lets a type-only arrow back and a dynamic import through', () => {
    const r = check({
      'a.ts': "import { b } from './b'\nexport interface A { n: number }\nexport const a = b\n",
      'b.ts': "import type { A } from './a'\nexport const b = (x: A): number => x.n\n",
      'c.ts': "export const c = async () => (await import('./d')).d\n",
      'd.ts': "import { c } from './c'\nexport const d = c\n",
    })
    expect(r.out).toMatch(/no import cycles in 4 files/)
    expect(r.status).toBe(0)
  })

  it('finds none in the sources', () => {
    const r = check()
    expect(r.out).toMatch(/no import cycles in \d{3,} files/)
    expect(r.status).toBe(0)
  })
})
