import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildProgram } from '../../../src/main/cli/index'
import { completionScript } from '../../../src/main/cli/completion'
import { SHELLS } from '../../../src/main/cli/completion-shells'

const program = buildProgram(() => {})
const commandNames = program.commands.map((c) => c.name())
const run = program.commands.find((c) => c.name() === 'run')!
const runFlags = run.options.map((o) => o.long!)

/** What the bash function offers for the words typed so far (the last one being completed). */
function bashCompletes(script: string, words: string[]): string[] {
  const file = join(mkdtempSync(join(tmpdir(), 'pacer-completion-')), 'pacer.bash')
  writeFileSync(file, script)
  const quoted = words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ')
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source "$1"; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _pacer_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
      'bash',
      file,
    ],
    { encoding: 'utf8', cwd: tmpdir() },
  )
  expect(r.stderr).toBe('')
  return r.stdout.split('\n').filter(Boolean)
}

describe('pacer completion', () => {
  it('the bash script lists every command, and every option of run', () => {
    const script = completionScript(program, 'bash')
    expect(commandNames).toEqual(expect.arrayContaining(['run', 'summary', 'serve', 'completion']))
    for (const name of commandNames) expect(script).toMatch(new RegExp(`\\b${name}\\b`))
    expect(runFlags.length).toBeGreaterThan(20)
    for (const flag of runFlags) expect(script).toContain(flag)
    expect(bashCompletes(script, ['pacer', ''])).toEqual(expect.arrayContaining(commandNames))
    expect(bashCompletes(script, ['pacer', 'run', '--'])).toEqual(
      expect.arrayContaining([...runFlags, '--help']),
    )
  })

  it('bash completes the choices of an option and of an argument, from the definitions', () => {
    const script = completionScript(program, 'bash')
    expect(bashCompletes(script, ['pacer', 'run', 'x.jsonl', '--controller', ''])).toEqual([
      'seed',
      'adaptive',
    ])
    expect(bashCompletes(script, ['pacer', 'results', '--format', 'c'])).toEqual(['csv'])
    expect(bashCompletes(script, ['pacer', 'completion', ''])).toEqual([...SHELLS])
    expect(bashCompletes(script, ['pacer', 'sum'])).toEqual(['summary'])
  })

  it('a command added to the definitions completes without editing any script', () => {
    const extended = buildProgram(() => {})
    extended.command('frobnicate').option('--level <n>', 'how much')
    for (const shell of SHELLS) {
      const script = completionScript(extended, shell)
      expect(script).toContain('frobnicate')
      expect(script).toMatch(/level/)
    }
  })

  it('the zsh and fish scripts name every command and run’s options; each parses', () => {
    for (const shell of ['zsh', 'fish'] as const) {
      const script = completionScript(program, shell)
      for (const name of commandNames) expect(script).toContain(name)
      for (const flag of runFlags) expect(script).toContain(shell === 'zsh' ? flag : flag.slice(2))
    }
    // zsh and fish are not installed everywhere: check the syntax where they are.
    for (const [shell, args] of [
      ['zsh', ['-n']],
      ['fish', ['--no-execute']],
    ] as const) {
      const probe = spawnSync(shell, ['-c', 'true'])
      if (probe.error) continue
      const file = join(mkdtempSync(join(tmpdir(), 'pacer-completion-')), `pacer.${shell}`)
      writeFileSync(file, completionScript(program, shell))
      const r = spawnSync(shell, [...args, file], { encoding: 'utf8' })
      expect(r.status, `${shell}: ${r.stderr}`).toBe(0)
    }
  })
})
