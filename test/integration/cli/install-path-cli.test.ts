// `pacer install-path` as a user runs it, on a temporary HOME: the link to this package's
// bin/pacer.cjs in ~/.local/bin, then the linked command itself answers.
import { spawnSync } from 'node:child_process'
import { readlinkSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runPacer, tempDir } from '../../helpers/cli'

const ROOT = path.resolve(__dirname, '../../..')

describe('pacer install-path', () => {
  it.skipIf(process.platform === 'win32')(
    'links bin/pacer.cjs into ~/.local/bin, says so, and the link runs pacer',
    async () => {
      const home = tempDir('pacer-home-')
      const r = await runPacer(['install-path'], { HOME: home, PATH: '/usr/bin:/bin' })
      expect(r.code, r.stderr).toBe(0)
      const link = path.join(home, '.local', 'bin', 'pacer')
      expect(r.stdout).toContain(`pacer installed: ${link}`)
      expect(r.stdout).toContain('is not on your PATH')
      expect(readlinkSync(link)).toBe(path.join(ROOT, 'bin', 'pacer.cjs'))
      const again = await runPacer(['install-path'], { HOME: home, PATH: path.dirname(link) })
      expect(again.stdout.trim()).toBe(`pacer is installed: ${link}`)
      const help = spawnSync(link, ['--help'], {
        encoding: 'utf8',
        env: { ...process.env, HOME: home },
      })
      expect(help.status, help.stderr).toBe(0)
      expect(help.stdout).toContain('install-path')
    },
    120_000,
  )
})
