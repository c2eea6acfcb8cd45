import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { ROOT, runPacer } from '../../helpers/cli'

const PACER = `${process.execPath} ${ROOT}/bin/pacer.cjs`

describe('pacer completion through the command', () => {
  it('bash: sourcing the script registers the completion for pacer', () => {
    const r = spawnSync('bash', ['-c', `source <(${PACER} completion bash) && complete -p pacer`], {
      encoding: 'utf8',
      env: { ...process.env, FORCE_COLOR: '0' },
    })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.trim()).toBe('complete -o default -F _pacer_complete pacer')
  })

  // zsh and fish are not on every machine (apt-get install zsh fish): checked where they are.
  const has = (shell: string) => !spawnSync(shell, ['-c', 'true']).error

  it.skipIf(!has('zsh'))('zsh: sourcing the script after compinit registers _pacer', () => {
    const r = spawnSync(
      'zsh',
      [
        '-c',
        `autoload -U compinit; compinit -u; source <(${PACER} completion zsh); print $_comps[pacer]`,
      ],
      { encoding: 'utf8' },
    )
    expect(r.stderr).toBe('')
    expect(r.stdout.trim()).toBe('_pacer')
  })

  it.skipIf(!has('fish'))('fish: completes commands and an option’s choices', () => {
    const r = spawnSync(
      'fish',
      [
        '-c',
        `function pacer; ${PACER} $argv; end; pacer completion fish | source; complete -C 'pacer ru'; complete -C 'pacer run x --controller '`,
      ],
      { encoding: 'utf8' },
    )
    expect(r.stderr).toBe('')
    const words = r.stdout.split('\n').map((line) => line.split('\t')[0])
    expect(words).toEqual(expect.arrayContaining(['run', 'seed', 'adaptive']))
  })

  it('an unknown shell is a usage error naming the choices', async () => {
    const r = await runPacer(['completion', 'tcsh'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/tcsh/)
    expect(r.stderr).toMatch(/bash, zsh, fish/)
  })
})
