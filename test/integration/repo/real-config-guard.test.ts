// The suite's guard over the user's own Pacer folder (helpers/real-config-guard.ts, vitest's
// globalSetup) notices a write, and the CLI given --db writes nothing under HOME at all.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runPacer, tempDir, writeJsonl } from '../../helpers/cli'
import guardRealConfig, {
  changesBetween,
  realPacerFolders,
  snapshotFolder,
} from '../../helpers/real-config-guard'

const saved = process.env['XDG_CONFIG_HOME']
afterEach(() => {
  if (saved === undefined) delete process.env['XDG_CONFIG_HOME']
  else process.env['XDG_CONFIG_HOME'] = saved
})

describe("the guard over the user's Pacer folder", () => {
  it('fails the run when a test created or changed a file there, and names it', () => {
    const config = tempDir('pacer-guard-config-')
    process.env['XDG_CONFIG_HOME'] = config
    expect(realPacerFolders()[0]).toBe(join(config, 'Pacer'))
    const quiet = guardRealConfig()
    expect(() => quiet()).not.toThrow()

    const teardown = guardRealConfig()
    mkdirSync(join(config, 'Pacer'))
    writeFileSync(join(config, 'Pacer', 'pacer.db'), 'x')
    expect(() => teardown()).toThrow(/created .*Pacer\/pacer\.db/)
  })

  it('tells a changed file from an unchanged one', () => {
    const dir = tempDir('pacer-guard-')
    writeFileSync(join(dir, 'a'), '1')
    const before = snapshotFolder(dir)
    expect(changesBetween(before, snapshotFolder(dir))).toEqual([])
    writeFileSync(join(dir, 'a'), '22')
    expect(changesBetween(before, snapshotFolder(dir))).toEqual([`changed ${join(dir, 'a')}`])
  })

  it('pacer run, forecast, summary and batches given --db write nothing under HOME', async () => {
    const home = tempDir('pacer-guard-home-')
    const dir = tempDir()
    const db = join(dir, 'p.db')
    const file = writeJsonl(dir, 'b.jsonl', [{ type: 't', payload: { n: 1 } }])
    const before = snapshotFolder(home)
    for (const args of [
      ['run', file, '--db', db, '--sim-latency-scale', '0'],
      ['forecast', file, '--db', db],
      ['summary', '--db', db],
      ['batches', '--db', db],
    ]) {
      const r = await runPacer(args, { HOME: home })
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0)
    }
    expect(changesBetween(before, snapshotFolder(home))).toEqual([])
  }, 60_000)
})
