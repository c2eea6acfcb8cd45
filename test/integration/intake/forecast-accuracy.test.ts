// `pacer forecast` against what `pacer run` really spends on the simulated provider: short prompts
// (the sim answers at least 16 tokens) and multi-step agents (each step resends the history, the
// previous answer and a continue turn) used to be underestimated 4-5×; now within ±15 %.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RunSummary } from '../../../src/main/cli/run'
import { ROOT, runPacer, tempDir, writeJsonl } from '../../helpers/cli'

const WORDS = 'ledger invoice churn cohort latency deploy margin replica quorum backlog'.split(' ')
const words = (n: number, offset: number) =>
  Array.from({ length: n }, (_, i) => WORDS[(offset + i * 7) % WORDS.length]).join(' ')

interface ForecastJson {
  total: { tasks: number; inputTokens: number; outputTokens: number; costMicros: number | null }
  invalidLines: number
}

const cases: { name: string; makeFile: (dir: string) => string }[] = [
  { name: 'the bundled demo batch', makeFile: () => join(ROOT, 'resources/examples/demo.jsonl') },
  {
    name: '200 tasks with 3-word prompts',
    makeFile: (dir) =>
      writeJsonl(
        dir,
        'short.jsonl',
        Array.from({ length: 200 }, (_, i) => ({
          type: 'classify',
          payload: { prompt: `${words(2, i)} #${i}` },
        })),
      ),
  },
  {
    name: '20 agents of 10 steps with 50-word prompts',
    makeFile: (dir) =>
      writeJsonl(
        dir,
        'agents.jsonl',
        Array.from({ length: 20 }, (_, i) => ({
          type: 'agent',
          steps: 10,
          payload: { prompt: `Agent ${i}: ${words(49, i)}` },
        })),
      ),
  },
]

describe('pacer forecast accuracy on the simulated provider', () => {
  it.each(cases)('forecasts $name within ±15 percent of the run', async ({ makeFile }) => {
    const dir = tempDir()
    const file = makeFile(dir)
    const forecast = await runPacer(['forecast', file, '--json', '--db', join(dir, 'f.db')])
    expect(forecast.code, forecast.stderr).toBe(0)
    const f = (JSON.parse(forecast.stdout) as ForecastJson).total

    const run = await runPacer([
      'run',
      file,
      '--db',
      join(dir, 'r.db'),
      '--json',
      '--sim-latency-scale',
      '0.02',
    ])
    expect(run.code, run.stderr).toBe(0)
    const r = JSON.parse(run.stdout) as RunSummary
    expect(r.failed).toBe(0)
    expect(r.tasks).toBe(f.tasks)

    const ratio = {
      input: f.inputTokens / r.inputTokens,
      output: f.outputTokens / r.outputTokens,
      cost: (f.costMicros ?? 0) / 1e6 / (r.costUsd ?? Number.NaN),
    }
    for (const [what, value] of Object.entries(ratio)) {
      expect(value, `${what}: forecast / actual`).toBeGreaterThan(0.85)
      expect(value, `${what}: forecast / actual`).toBeLessThan(1.15)
    }
  })
})
