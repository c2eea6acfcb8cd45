// `npm run bench:pacing-live`: the real-time leg of the pacing family. A dozen drawn providers
// (drawFamily(LIVE_DRAWS, 1), the draws the virtual-time race starts with), each shortened to a
// schedule of SCHEDULE_MS after a warm-up of WARMUP_MS, served on loopback as OpenAI-compatible
// servers, and run by real `pacer run` processes: one, then three on one database. Beside them, the
// same shortened draws in virtual time (the Pacer contender of bench/scheduler), as one process and
// as three on one database file (bench/scheduler/processes.ts). Utilization and throttled share are
// measured where the capacity lives, at the server. The table says whether the virtual-time figures
// hold in real time (each live median within 5 points of its virtual twin's, and the mean of the
// draws' differences within 5 too: pacing-live/stats.ts) and what three processes cost against
// one; it exits non-zero only when something crashed (a process that failed, a task not answered
// once).
import { describeDraw, type ProviderDraw } from './scheduler/family'
import { drawFamily } from './scheduler/family-race'
import { LIVE_DRAWS, LIVE_SCHEDULE_MS, LIVE_WARMUP_MS, shortDraw } from './pacing-live/draws'
import { liveLeg, virtualLeg, type Leg } from './pacing-live/legs'
import { median, pairedMean } from './pacing-live/stats'

const drawsAt = process.argv.indexOf('--draws')
/** `-- --draws N`: the first N draws only (a quick look). */
const DRAWS = drawsAt === -1 ? LIVE_DRAWS : Number(process.argv[drawsAt + 1])
const onlyAt = process.argv.indexOf('--only')
/** `-- --only SEED[,SEED]`: those draws only (a draw's seed, as the table names it: 100010). */
const ONLY = onlyAt === -1 ? null : new Set((process.argv[onlyAt + 1] ?? '').split(',').map(Number))
/** `-- --virtual`: the virtual-time legs only (one process and three), in seconds, no live leg. */
const VIRTUAL_ONLY = process.argv.includes('--virtual')
const SCHEDULE_MS = LIVE_SCHEDULE_MS
const WARMUP_MS = LIVE_WARMUP_MS
/** How close the live medians should come to the virtual ones, in points. */
const WITHIN = 5

interface Row {
  draw: ProviderDraw
  live1: Leg
  live3: Leg
  virtual: Leg
  virtual3: Leg
}

const pct = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : '-')
const pts = (x: number) =>
  Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}` : '-'
const progress = (line: string) => process.stderr.write(`[pacing-live] ${line}\n`)

const COLUMNS = ['live-1', 'live-3', 'virt-1', 'virt-3', 'Δ1', 'Δ3']
const pad = (cells: string[], widths: number[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[0]!) : c.padStart(widths[i]!))).join('  ')

/** One figure's table: a row per draw, then the medians; Δ: live less its virtual twin. */
function table(title: string, rows: Row[], figure: (l: Leg) => number): string[] {
  const cells = (label: string, l1: number, l3: number, v1: number, v3: number) => [
    label,
    pct(l1),
    pct(l3),
    pct(v1),
    pct(v3),
    pts(l1 - v1),
    pts(l3 - v3),
  ]
  const lines = rows.map((r) =>
    cells(
      `#${r.draw.seed}`,
      figure(r.live1),
      figure(r.live3),
      figure(r.virtual),
      figure(r.virtual3),
    ),
  )
  const m = (pick: (r: Row) => Leg) => median(rows.map((r) => figure(pick(r))))
  // Differences of the medians, not medians of the differences: what the check below compares.
  lines.push(
    cells(
      'median',
      m((r) => r.live1),
      m((r) => r.live3),
      m((r) => r.virtual),
      m((r) => r.virtual3),
    ),
  )
  const widths = [8, 7, 7, 7, 7, 7, 7]
  return [`${title} (%)`, pad(['draw', ...COLUMNS], widths), ...lines.map((l) => pad(l, widths))]
}

/**
 * Each live leg against its virtual twin, and three processes against one in virtual time: the
 * difference of the medians, and the mean of the draws' differences. A dozen draws of 15 s, some
 * of a dozen calls (a call is 8 points there), put the median where the twelve figures leave a gap,
 * and the median moved 15 points between two runs of the same code; the paired mean compares each
 * draw with its own twin, and says how sure it is.
 */
function verdict(name: string, rows: Row[], figure: (l: Leg) => number): string[] {
  const m = (pick: (r: Row) => Leg) => median(rows.map((r) => figure(pick(r))))
  const within = (d: number) => (Math.abs(d) <= WITHIN / 100 ? 'within' : 'NOT within')
  const line = (leg: string, live: (r: Row) => Leg, twin: (r: Row) => Leg, of: string) => {
    const d = m(live) - m(twin)
    const { mean, se } = pairedMean(
      rows.map((r) => figure(live(r))),
      rows.map((r) => figure(twin(r))),
    )
    return (
      `${name}, ${leg}: median ${pts(d)} points from ${of}, ${within(d)} ${WITHIN}; ` +
      `the draws' differences ${pts(mean)} ± ${Number.isFinite(se) ? (100 * se).toFixed(1) : '?'} in the mean, ${within(mean)} ${WITHIN}`
    )
  }
  return [
    line(
      'one process',
      (r) => r.live1,
      (r) => r.virtual,
      'virtual time',
    ),
    line(
      'three processes',
      (r) => r.live3,
      (r) => r.virtual3,
      'virtual time (three)',
    ),
    line(
      'three processes',
      (r) => r.live3,
      (r) => r.virtual,
      'one process in virtual time',
    ),
  ]
}

/** `--virtual`: each draw's virtual legs, three processes against one, and the medians. */
function virtualTable(draws: ProviderDraw[], virtual: Map<number, [Leg, Leg]>): string[] {
  const widths = [8, 7, 7, 7, 7, 7, 7]
  const row = (label: string, legs: [Leg, Leg][]) => {
    const m = (k: 0 | 1, f: (l: Leg) => number) => median(legs.map((l) => f(l[k])))
    const [u1, u3] = [m(0, (l) => l.utilization), m(1, (l) => l.utilization)]
    const [t1, t3] = [m(0, (l) => l.throttledShare), m(1, (l) => l.throttledShare)]
    return pad([label, pct(u1), pct(u3), pts(u3 - u1), pct(t1), pct(t3), pts(t3 - t1)], widths)
  }
  return [
    `pacing-live --virtual: ${draws.length} draws, schedules of ${SCHEDULE_MS / 1000} s after ${WARMUP_MS / 1000} s of warm-up`,
    pad(['draw', 'util-1', 'util-3', 'Δ', 'thr-1', 'thr-3', 'Δ'], widths),
    ...draws.map((d) => row(`#${d.seed}`, [virtual.get(d.seed)!])),
    row('median', [...virtual.values()]),
  ]
}

async function main(): Promise<void> {
  const known = drawFamily(LIVE_DRAWS, 1).map((d) => d.seed)
  const unknown = [...(ONLY ?? [])].filter((seed) => !known.includes(seed))
  if (unknown.length > 0 || ONLY?.size === 0) {
    const given = process.argv[onlyAt + 1] ?? ''
    console.error(`--only: no draw ${JSON.stringify(given)}; the draws are ${known.join(', ')}`)
    process.exitCode = 2
    return
  }
  const draws = drawFamily(LIVE_DRAWS, 1)
    .filter((d) => ONLY === null || ONLY.has(d.seed))
    .slice(0, DRAWS)
    .map((d) => shortDraw(d, SCHEDULE_MS, WARMUP_MS))
  const began = Date.now()
  // Virtual time first: it fakes the global clock, which must not run under a live server.
  const virtual = new Map<number, [Leg, Leg]>()
  for (const draw of draws) {
    virtual.set(draw.seed, [await virtualLeg(draw), await virtualLeg(draw, 3)])
  }
  progress(`virtual time: ${draws.length} draws in ${Date.now() - began} ms`)
  if (VIRTUAL_ONLY) {
    console.log(virtualTable(draws, virtual).join('\n'))
    return
  }

  const rows: Row[] = []
  for (const [i, draw] of draws.entries()) {
    progress(`${i + 1}/${draws.length} ${describeDraw(draw)}, ${draw.tasks} tasks`)
    const live1 = await liveLeg(draw, 1)
    progress(`  one process: ${(live1.ms / 1000).toFixed(1)} s, ${live1.attempts} calls`)
    const live3 = await liveLeg(draw, 3)
    progress(`  three processes: ${(live3.ms / 1000).toFixed(1)} s, ${live3.attempts} calls`)
    const [one, three] = virtual.get(draw.seed)!
    rows.push({ draw, live1, live3, virtual: one, virtual3: three })
  }

  const out = [
    `pacing-live: ${draws.length} draws of drawFamily(${LIVE_DRAWS}, 1), schedules of ${SCHEDULE_MS / 1000} s after ${WARMUP_MS / 1000} s of warm-up (${((Date.now() - began) / 60_000).toFixed(1)} min)`,
    ...draws.map((d) => `  ${describeDraw(d)}, ${d.tasks} tasks`),
    '',
    ...table('utilization', rows, (l) => l.utilization),
    '',
    ...table('throttled share', rows, (l) => l.throttledShare),
    '',
    ...verdict('utilization', rows, (l) => l.utilization),
    ...verdict('throttled share', rows, (l) => l.throttledShare),
    ...rows.flatMap((r) =>
      (['live1', 'live3'] as const)
        .filter((leg) => r[leg].left > 0)
        .map(
          (leg) => `#${r.draw.seed} ${leg}: stopped after the schedule, ${r[leg].left} tasks left`,
        ),
    ),
  ]
  console.log(out.join('\n'))
  const crashes = rows.flatMap((r) =>
    (['live1', 'live3'] as const).flatMap((leg) =>
      r[leg].trouble.map((t) => `#${r.draw.seed} ${leg}: ${t}`),
    ),
  )
  if (crashes.length > 0) {
    console.error(['crashed:', ...crashes].join('\n  '))
    process.exitCode = 1
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
