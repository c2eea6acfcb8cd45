// `npm run dist` must not fail late on a bad config: electron-builder's own schema check, offline.
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, tempDir } from '../../helpers/cli'

function check(env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [join(ROOT, 'scripts/check-dist-config.mjs')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  })
}

describe('electron-builder configuration', () => {
  it('is valid against electron-builder’s schema', () => {
    const r = check()
    expect(r.status, r.stderr + r.stdout).toBe(0)
    expect(r.stdout + r.stderr).toMatch(/electron-builder\.yml is valid/)
  })

  it('a config with an unknown key is refused', () => {
    const bad = join(tempDir(), 'electron-builder.yml')
    writeFileSync(
      bad,
      `${readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8')}\nnotAnOption: true\n`,
    )
    const r = check({ PACER_BUILDER_CONFIG: bad })
    expect(r.status).toBe(1)
    expect(r.stdout + r.stderr).toMatch(/notAnOption/)
  })
})
