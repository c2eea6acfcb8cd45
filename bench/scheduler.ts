// `npm run bench:scheduler`: Pacer's pacing against what people use, on providers whose hidden
// capacity changes mid-run, in virtual time (seconds to run, the same numbers every run):
//   a. concurrency capacity 8 -> 3 -> 10, no headers
//   b. requests per minute 500 -> 200 -> 800, announced in OpenAI-style x-ratelimit-* headers
//   c. input tokens per minute 800k -> 320k -> 1.2M, Anthropic-style headers, tasks of mixed size
// 2,000 tasks each: the three named scenarios, kept as fixed rows. Then the family: providers drawn
// from a seed across every habit the issue names (bench/scheduler/family.ts), every contender on
// the same draws, their distributions in a second table. Writes both to
// bench/results/scheduler.json and exits non-zero if Pacer misses a target. `-- --seed N` replays
// everything on other random draws (printed, not written); `-- --family N` draws N providers
// (default 60; 0 skips the family).
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { format, resolveConfig } from 'prettier'
import type { Contender, Run } from './scheduler/contenders'
import { CONTENDERS } from './scheduler/contenders'
import type { BenchTask, SimulatedProvider } from './scheduler/providers'
import { budgetProvider, concurrencyProvider } from './scheduler/providers'
import { seededRandom } from '../test/helpers/random'
import { T0, inVirtualTime } from './scheduler/virtual-time'
import { checkFamily, printFamily, runFamily } from './scheduler/family-report'

const TASKS = 2000
const seedAt = process.argv.indexOf('--seed')
const SEED = seedAt === -1 ? 0 : Number(process.argv[seedAt + 1])
const familyAt = process.argv.indexOf('--family')
const FAMILY = familyAt === -1 ? 60 : Number(process.argv[familyAt + 1])
for (const [flag, value] of [
  ['--seed', SEED],
  ['--family', FAMILY],
] as const) {
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${flag} takes a whole number >= 0, got ${String(value)}`)
    process.exit(2)
  }
}

interface Scenario {
  id: string
  title: string
  /** Header scenarios have the stricter targets. */
  headers: boolean
  seed: number
  task(random: () => number, id: number): BenchTask
  provider(random: () => number): SimulatedProvider
  budget?: Run['budget']
}

const between = (random: () => number, lo: number, hi: number) => lo + random() * (hi - lo)

function task(random: () => number, id: number, input: number, output: number, latencyMs: number) {
  return {
    id,
    inputTokens: Math.round(input),
    outputTokens: Math.round(output),
    // About four characters a token: right to within 10 %, and the caller cannot know the output.
    estimate: { inputTokens: Math.round(input * between(random, 0.9, 1.1)), outputTokens: 300 },
    latencyMs: Math.round(latencyMs),
  }
}

const SCENARIOS: Scenario[] = [
  {
    id: 'a',
    title: 'concurrency 8 -> 3 -> 10, no headers',
    headers: false,
    seed: 1,
    task: (r, id) =>
      task(r, id, between(r, 500, 1500), between(r, 100, 300), between(r, 600, 1400)),
    provider: (r) =>
      concurrencyProvider(
        [
          { fromMs: 0, value: 8 },
          { fromMs: 100_000, value: 3 },
          { fromMs: 200_000, value: 10 },
        ],
        r,
      ),
  },
  {
    id: 'b',
    title: 'requests/min 500 -> 200 -> 800, OpenAI headers',
    headers: true,
    seed: 2,
    task: (r, id) => task(r, id, between(r, 500, 1500), between(r, 100, 300), between(r, 300, 900)),
    provider: (r) =>
      budgetProvider({
        style: 'openai',
        binding: 'requests',
        phases: [
          { fromMs: 0, value: 500 },
          { fromMs: 90_000, value: 200 },
          { fromMs: 180_000, value: 800 },
        ],
        others: { tokens: 2_000_000 },
        random: r,
      }),
    budget: { kind: 'requests', perMinute: 500 },
  },
  {
    id: 'c',
    title: 'input tokens/min 800k -> 320k -> 1.2M, Anthropic headers, mixed sizes',
    headers: true,
    seed: 3,
    task: (r, id) => {
      const output = between(r, 50, 600)
      // Log-uniform 200..8,000 input tokens: many small tasks, a few large ones.
      return task(r, id, 200 * 40 ** r(), output, 250 + 1.2 * output)
    },
    provider: (r) =>
      budgetProvider({
        style: 'anthropic',
        binding: 'input-tokens',
        phases: [
          { fromMs: 0, value: 800_000 },
          { fromMs: 120_000, value: 320_000 },
          { fromMs: 240_000, value: 1_200_000 },
        ],
        others: { requests: 4000, 'output-tokens': 400_000 },
        random: r,
      }),
    budget: { kind: 'input-tokens', perMinute: 800_000 },
  },
]

interface Row {
  contender: string
  utilization: number
  throttledShare: number
  attempts: number
  makespanS: number
  p95LatencyS: number
  limitChanges: number
}

async function race(scenario: Scenario, contender: Contender): Promise<Row> {
  const taskRandom = seededRandom(scenario.seed + SEED * 7919)
  const tasks = Array.from({ length: TASKS }, (_, id) => scenario.task(taskRandom, id))
  const provider = scenario.provider(seededRandom(scenario.seed * 1000 + 1 + SEED * 7919))
  const firstSent = new Map<number, number>()
  const latencies: number[] = []
  let attempts = 0
  let refused = 0
  let end = T0
  const run: Run = {
    tasks,
    provider,
    random: seededRandom(scenario.seed * 1000 + 2 + SEED * 7919),
    budget: scenario.budget,
    async call(t) {
      if (!firstSent.has(t.id)) firstSent.set(t.id, Date.now())
      attempts++
      const answer = await provider.call(t)
      if (answer.status === 429 || answer.status === 503 || answer.status === 529) refused++
      else {
        end = Math.max(end, Date.now())
        latencies.push(Date.now() - (firstSent.get(t.id) as number))
      }
      return answer
    },
  }
  const limitChanges = await inVirtualTime(() => contender.drive(run))
  if (latencies.length !== TASKS) {
    throw new Error(`${contender.name}: ${latencies.length} of ${TASKS} tasks answered`)
  }
  latencies.sort((x, y) => x - y)
  return {
    contender: contender.name,
    utilization: round(provider.utilization(end), 3),
    throttledShare: round(refused / attempts, 4),
    attempts,
    makespanS: round((end - T0) / 1000, 1),
    p95LatencyS: round((latencies[Math.floor(0.95 * (TASKS - 1))] as number) / 1000, 2),
    limitChanges,
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/** Pacer's targets; a failure is a line of the report and a non-zero exit code. */
function check(scenario: Scenario, rows: Row[]): string[] {
  const failures: string[] = []
  const pacer = rows.find((r) => r.contender.startsWith('Pacer')) as Row
  const [minUtil, maxThrottled] = scenario.headers ? [0.95, 0.01] : [0.9, 0.02]
  if (pacer.utilization < minUtil) failures.push(`utilization ${pacer.utilization} < ${minUtil}`)
  if (pacer.throttledShare > maxThrottled) {
    failures.push(`throttled ${pacer.throttledShare} > ${maxThrottled}`)
  }
  for (const r of rows) {
    if (r === pacer || r.contender.startsWith('oracle')) continue
    if (r.utilization > pacer.utilization && r.throttledShare < pacer.throttledShare) {
      failures.push(`${r.contender} is better on both figures`)
    }
  }
  return failures.map((f) => `scenario ${scenario.id}: Pacer ${f}`)
}

function printTable(results: { scenario: Scenario; rows: Row[] }[]): void {
  const header = ['scenario', 'contender', 'util', 'throttled', 'makespan', 'p95 lat', 'changes']
  const lines = [header]
  for (const { scenario, rows } of results) {
    for (const r of rows) {
      lines.push([
        scenario.id,
        r.contender,
        r.utilization.toFixed(3),
        `${(r.throttledShare * 100).toFixed(2)} %`,
        `${r.makespanS.toFixed(1)} s`,
        `${r.p95LatencyS.toFixed(2)} s`,
        String(r.limitChanges),
      ])
    }
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] as string).length)))
  for (const line of lines) {
    const cells = line.map((cell, i) => {
      const width = widths[i] as number
      return i < 2 ? cell.padEnd(width) : cell.padStart(width)
    })
    console.log(cells.join('  '))
  }
}

async function main(): Promise<void> {
  const started = performance.now()
  const results: { scenario: Scenario; rows: Row[] }[] = []
  for (const scenario of SCENARIOS) {
    const rows: Row[] = []
    for (const contender of CONTENDERS) {
      if (contender.applies && !contender.applies(scenario.budget)) continue
      const t = performance.now()
      rows.push(await race(scenario, contender))
      console.error(
        `  ${scenario.id} ${contender.name}: ${((performance.now() - t) / 1000).toFixed(1)} s`,
      )
    }
    results.push({ scenario, rows })
  }
  console.log(`scheduler bench: ${TASKS} tasks per scenario, virtual time`)
  for (const { scenario } of results) console.log(`  ${scenario.id}. ${scenario.title}`)
  printTable(results)
  const family = FAMILY > 0 ? await runFamily(FAMILY, SEED + 1) : []
  if (FAMILY > 0) printFamily(family, FAMILY, SEED + 1)
  const failures = [
    ...results.flatMap(({ scenario, rows }) => check(scenario, rows)),
    ...(FAMILY > 0 ? checkFamily(family) : []),
  ]
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  if (SEED === 0) {
    const out = path.join(__dirname, 'results', 'scheduler.json')
    mkdirSync(path.dirname(out), { recursive: true })
    const json = {
      command: 'npm run bench:scheduler',
      reproduce: `npm run bench:scheduler -- --family ${FAMILY}`,
      tasksPerScenario: TASKS,
      scenarios: results.map(({ scenario, rows }) => ({
        id: scenario.id,
        title: scenario.title,
        rows,
      })),
      family: { seed: SEED + 1, providers: FAMILY, rows: family },
      targetsMet: failures.length === 0,
      missed: failures,
    }
    // In the repository's format, so that a committed run passes the format check as written.
    const options = { ...(await resolveConfig(out)), filepath: out }
    writeFileSync(out, await format(JSON.stringify(json, null, 2), options))
    console.log(`ran in ${seconds} s, written to ${path.relative(process.cwd(), out)}`)
  } else {
    console.log(`ran in ${seconds} s with --seed ${SEED} (not written)`)
  }
  for (const f of failures) console.log(`TARGET MISSED ${f}`)
  if (failures.length > 0) process.exitCode = 1
}

void main()
