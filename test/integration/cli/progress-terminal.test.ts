// The progress bar of `pacer run` on a real terminal (a pty through script(1)): however the run
// ends — Ctrl-C, SIGTERM, done — the bar's line is erased before the summary, so the last screen
// holds no bar fragment and no line written over another.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir, until, writeJsonl } from '../../helpers/cli'
import { startPacerInPty, terminalScreen } from '../../helpers/pty'

/** shades_classic's glyphs: on the last screen they would be a bar left behind. */
const BAR = /[\u2588\u2591]/u

function run(tasks: number) {
  const dir = tempDir('pacer-progress-pty-')
  const file = writeJsonl(
    dir,
    'bar.jsonl',
    Array.from({ length: tasks }, (_, i) => ({ type: 'bar', payload: { i } })),
  )
  return startPacerInPty([
    'run',
    file,
    '--db',
    join(dir, 'pacer.db'),
    '--sim-latency-scale',
    '2',
    '--max-concurrency',
    '2',
  ])
}

/** The screen's lines from the summary's first on, and every line checked for a bar fragment. */
function checkScreen(output: string, first: RegExp): string[] {
  const screen = terminalScreen(output)
  expect(screen.filter((l) => BAR.test(l))).toEqual([])
  const at = screen.findIndex((l) => first.test(l))
  expect(at, screen.join('\n')).toBeGreaterThanOrEqual(0)
  return screen.slice(at)
}

describe('the progress bar on a terminal', () => {
  it('Ctrl-C: the stop notice and the summary each start on a clean line', async () => {
    const pty = run(300)
    await until(() => BAR.test(pty.output()), 30_000)
    pty.type('\u0003')
    const { output } = await pty.done
    const summary = checkScreen(output, /^interrupted: /)
    expect(summary[0]).toMatch(/^interrupted: \S+bar\.jsonl \(batch /)
    const screen = terminalScreen(output)
    expect(screen.some((l) => l.startsWith('pacer: stopping: no new calls'))).toBe(true)
  }, 60_000)

  it('SIGTERM: the summary starts on a clean line', async () => {
    const pty = run(300)
    await until(() => BAR.test(pty.output()), 30_000)
    process.kill((await until(() => pty.pacerPid(), 5000))!, 'SIGTERM')
    const { output } = await pty.done
    checkScreen(output, /^interrupted: /)
  }, 60_000)

  it('a normal end: the bar is gone, the summary in its place', async () => {
    const pty = run(6)
    const { output, code } = await pty.done
    expect(code).toBe(0)
    expect(output).toMatch(BAR)
    checkScreen(output, /^done: /)
  }, 60_000)
})
