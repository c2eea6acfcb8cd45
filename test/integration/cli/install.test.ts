// Issue 24: the packed package installs as a tool with its runtime dependencies only, and the
// installed `pacer` works from any folder. The tarball is packed from a staging copy (package.json,
// bin/, the CLI built into it, the built console, resources/), so this test never rewrites the
// clone's out/ under tests running beside it; `npm pack` in the clone packs the same "files".
//
// Slow (npm builds better-sqlite3 from source: minutes on a busy machine) and it needs the npm
// registry or a warm npm cache: skipped, saying why, when npm cannot reach the registry (or with
// PACER_SKIP_INSTALL_TEST=1, for a quick local run).
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ROOT, tempDir } from '../../helpers/cli'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const INSTALL_MS = 15 * 60_000

function registryProblem(): string | null {
  const r = spawnSync(npm, ['ping', '--fetch-timeout=15000', '--fetch-retries=0'], {
    encoding: 'utf8',
    timeout: 30_000,
  })
  if (r.status === 0) return null
  return `npm cannot reach the registry (npm ping: ${(r.stderr || r.error?.message || '').trim().split('\n')[0]})`
}

const skipReason =
  process.env['PACER_SKIP_INSTALL_TEST'] === '1' ? 'PACER_SKIP_INSTALL_TEST=1' : registryProblem()

function sh(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, FORCE_COLOR: '0', ...opts.env },
    encoding: 'utf8',
    timeout: INSTALL_MS,
  })
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' }
}

describe.skipIf(skipReason !== null)(
  `npm pack, then npm install -g into a temporary prefix${skipReason ? ` — skipped: ${skipReason}` : ''}`,
  () => {
    const work = tempDir('pacer-install-')
    const prefix = join(work, 'prefix')
    const installed = join(prefix, 'lib/node_modules/pacer')
    // A HOME of its own for the installed command (its default database and settings); npm itself
    // keeps the user's HOME, where its cache and node-gyp's Node headers are (TOOLCHAIN.md).
    const home = join(work, 'home')
    const elsewhere = join(work, 'elsewhere')
    const pacer = (args: string[]) =>
      sh(join(prefix, 'bin/pacer'), args, { cwd: elsewhere, env: { HOME: home } })

    beforeAll(() => {
      mkdirSync(home)
      mkdirSync(elsewhere)
      const stage = join(work, 'stage')
      mkdirSync(stage)
      for (const f of ['package.json', 'README.md', 'bin', 'resources/examples', 'docs']) {
        cpSync(join(ROOT, f), join(stage, f), { recursive: true })
      }
      const build = sh(
        process.execPath,
        ['scripts/build-cli.mjs', '--out', join(stage, 'out/cli')],
        {
          cwd: ROOT,
        },
      )
      expect(build.code, build.stderr).toBe(0)
      if (!existsSync(join(ROOT, 'out/renderer/index.html'))) {
        const vite = sh(
          process.execPath,
          ['node_modules/electron-vite/bin/electron-vite.js', 'build'],
          {
            cwd: ROOT,
          },
        )
        expect(vite.code, vite.stderr).toBe(0)
      }
      cpSync(join(ROOT, 'out/renderer'), join(stage, 'out/renderer'), { recursive: true })
      const pack = sh(npm, ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: stage })
      expect(pack.code, pack.stderr).toBe(0)
      const tarball = readdirSync(work).find((f) => /^pacer-.*\.tgz$/.test(f))!
      const install = sh(
        npm,
        [
          'install',
          '--global',
          '--prefix',
          prefix,
          join(work, tarball),
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          '--allow-scripts=better-sqlite3,esbuild',
        ],
        { cwd: work },
      )
      expect(install.code, install.stderr).toBe(0)
    }, INSTALL_MS)

    it('ships the built CLI and no sources; installs no dev dependency', () => {
      expect(existsSync(join(installed, 'out/cli/pacer.mjs'))).toBe(true)
      expect(existsSync(join(installed, 'out/renderer/index.html'))).toBe(true)
      expect(existsSync(join(installed, 'src'))).toBe(false)
      const deps = readdirSync(join(installed, 'node_modules'))
      for (const dev of ['electron', 'electron-vite', 'vite', 'vitest', 'typescript', 'react']) {
        expect(deps).not.toContain(dev)
      }
      expect(deps).toEqual(expect.arrayContaining(['better-sqlite3', 'tsx', 'commander']))
    })

    it('pacer --help, pacer demo and pacer run work from another folder', () => {
      const help = pacer(['--help'])
      expect(help.code, help.stderr).toBe(0)
      expect(help.stdout).toMatch(/Usage: pacer/)
      expect(help.stdout).toMatch(/completion <shell>/)

      const demo = pacer(['demo', '--db', join(work, 'demo.db')])
      expect(demo.code, demo.stderr).toBe(0)
      expect(demo.stdout).toMatch(/TOTAL\s+56/)

      const batch = join(elsewhere, 'batch.jsonl')
      writeFileSync(
        batch,
        ['one', 'two', 'one']
          .map((p) => JSON.stringify({ type: 't', payload: { prompt: p } }))
          .join('\n') + '\n',
      )
      const run = pacer(['run', batch, '--db', join(work, 'run.db'), '--json'])
      expect(run.code, run.stderr).toBe(0)
      const totals = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>
      expect(totals).toMatchObject({ tasks: 3, distinct: 2, executed: 2, reused: 1, failed: 0 })

      const completion = sh(
        'bash',
        ['-c', `source <("${join(prefix, 'bin/pacer')}" completion bash) && complete -p pacer`],
        { cwd: elsewhere, env: { HOME: home } },
      )
      expect(completion.stdout).toMatch(/_pacer_complete pacer/)
    })
  },
)
