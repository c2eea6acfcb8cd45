// Which draws make Pacer's tails: one row per draw of the family (its habits, Pacer's utilization,
// throttled share and regain times), then Pacer's distributions, in virtual time. Pacer alone
// (the oracle is at ~1.0 on every draw), so a change to the controller is judged in a minute.
//   node bin/run-ts.cjs bench/scheduler/diag.ts [--seed S] [--family N] [--only 12,40] [--processes 3] [--live]
//     [--lagged-oracle K | --probing-oracle N [--probe-backoff] | --oracle]
// `--processes N`: Pacer as N `pacer run` processes on one database (processes.ts).
// `--trace` prints, per second, the draw's cap, calls in flight, Pacer's limit, sends and refusals,
// and each limit change and pause; DIAG_CALLS=FROM,TO (seconds after the warm-up) every answer
// between them. `--lagged-oracle K` races the oracle told the capacity K round trips late
// (lagged-oracle.ts) instead of Pacer, `--oracle` the oracle itself: the bound any controller
// that must observe a change stays under, on the same rows. `--probing-oracle N` races the oracle
// that is told falls at once but must probe for rises, a probe per N calls (probing-oracle.ts):
// the bound for a controller that spends about 1/N of its calls finding rises; with
// `--probe-backoff` its cap probes start a round trip after each change and back off.
import type { Contender } from './contenders'
import { CONTENDERS, viaScheduler } from './contenders'
import { controllerFactory } from '../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../src/main/engine/pacing/scheduler'
import type { FamilyProvider } from './family'
import { pacerProcesses } from './processes'
import { laggedOracle } from './lagged-oracle'
import { probingOracle } from './probing-oracle'
import { describeDraw } from './family'
import { drawFamily, raceDraw, summarize } from './family-race'
import { T0 } from './virtual-time'
import { LIVE_DRAWS, LIVE_SCHEDULE_MS, LIVE_WARMUP_MS, shortDraw } from '../pacing-live/draws'

const arg = (flag: string, fallback: string) => {
  const at = process.argv.indexOf(flag)
  return at === -1 ? fallback : (process.argv[at + 1] as string)
}
const SEED = Number(arg('--seed', '0'))
const COUNT = Number(arg('--family', '60'))
const ONLY = arg('--only', '').split(',').filter(Boolean).map(Number)

const TRACE = process.argv.includes('--trace')
// `--live`: the live leg's draws (bench:pacing-live: the first 12 of family seed 1, shortened to
// its schedule), so a draw where real time and virtual time part can be traced in virtual time.
const LIVE = process.argv.includes('--live')
const PROCESSES = Number(arg('--processes', '1'))
const LAGGED = arg('--lagged-oracle', '')
const ORACLE = process.argv.includes('--oracle')
const PROBING = arg('--probing-oracle', '')
const BACKOFF = process.argv.includes('--probe-backoff')

/** Pacer as the bench runs it, printing each limit change and the provider's cap and in-flight. */
const traced: Contender = {
  name: 'Pacer (traced)',
  drive: (run) => {
    const scheduler = new Scheduler({
      createController: controllerFactory('adaptive'),
      pacing: { random: run.random },
    })
    const p = run.provider as FamilyProvider
    const at = () => ((Date.now() - T0 - p.draw.warmupMs) / 1000).toFixed(2).padStart(7)
    scheduler.on('limit', (c) =>
      console.log(`${at()} limit ${c.from.toFixed(1)} -> ${c.to.toFixed(1)} ${c.reason}`),
    )
    scheduler.on('pause', (c) => console.log(`${at()} pause ${c.reason}`))
    let refused = 0
    let sent = 0
    const call = run.call.bind(run)
    run.call = async (t) => {
      sent++
      const answer = await call(t)
      if (answer.status >= 429) refused++
      if (process.env['DIAG_CALLS']) {
        const [from, to] = (process.env['DIAG_CALLS'] as string).split(',').map(Number)
        const t = Number(at())
        if (t >= (from as number) && t <= (to as number)) {
          const s = scheduler.snapshot()[0]
          console.log(
            `${at()} answer ${answer.status} held ${s?.inflight} limit ${s?.limit.toFixed(2)} pace ${JSON.stringify(s?.pace?.perMinute ?? null)}`,
          )
        }
      }
      return answer
    }
    const timer = setInterval(() => {
      const s = scheduler.snapshot()[0]
      const pace = s?.pace ? JSON.stringify(s.pace.perMinute) : ''
      console.log(
        `${at()} cap ${p.capacityNow()} inflight ${p.inflight()} limit ${s?.concurrency} sent ${sent} refused ${refused} ${pace}`,
      )
      sent = 0
      refused = 0
    }, 1000)
    return viaScheduler(run, scheduler, true).finally(() => clearInterval(timer))
  },
}

async function main(): Promise<void> {
  if (LAGGED !== '' && !(Number(LAGGED) > 0 && Number.isFinite(Number(LAGGED)))) {
    console.error(`--lagged-oracle: ${JSON.stringify(LAGGED)} is not a number of round trips > 0`)
    process.exitCode = 2
    return
  }
  if (PROBING !== '' && !(Number(PROBING) >= 1 && Number.isFinite(Number(PROBING)))) {
    console.error(`--probing-oracle: ${JSON.stringify(PROBING)} is not a number of calls >= 1`)
    process.exitCode = 2
    return
  }
  const pacer =
    PROBING !== ''
      ? probingOracle(Number(PROBING), BACKOFF)
      : LAGGED !== ''
        ? laggedOracle(Number(LAGGED))
        : ORACLE
          ? CONTENDERS.find((c) => c.name.startsWith('oracle'))
          : PROCESSES > 1
            ? pacerProcesses(PROCESSES)
            : TRACE
              ? traced
              : CONTENDERS.find((c) => c.name.startsWith('Pacer'))
  if (!pacer) throw new Error('no such contender')
  const family = LIVE
    ? drawFamily(LIVE_DRAWS, 1).map((d) => shortDraw(d, LIVE_SCHEDULE_MS, LIVE_WARMUP_MS))
    : drawFamily(COUNT, SEED + 1)
  const draws = family.filter(
    (d, i) => ONLY.length === 0 || ONLY.includes(i) || ONLY.includes(d.seed),
  )
  const results = []
  for (const [i, draw] of draws.entries()) {
    const r = await raceDraw(draw, pacer)
    results.push(r)
    const regain = r.regainRtts.map((x) => x.toFixed(1)).join(',')
    console.log(
      `${String(i).padStart(2)} util ${r.utilization.toFixed(3)} thr ${(r.throttledShare * 100)
        .toFixed(2)
        .padStart(6)} % regain [${regain}]  ${describeDraw(draw)}`,
    )
  }
  const [s] = summarize(results)
  if (!s) return
  console.log(
    `seed ${SEED}: util med ${s.utilization.median.toFixed(3)} p10 ${s.utilization.p10.toFixed(3)}` +
      ` worst ${s.utilization.worst.toFixed(3)} | thr med ${(s.throttled.median * 100).toFixed(2)} %` +
      ` p90 ${(s.throttled.p90 * 100).toFixed(2)} % worst ${(s.throttled.worst * 100).toFixed(2)} %` +
      ` | regain med ${s.regainRtts.median.toFixed(1)} p90 ${s.regainRtts.p90.toFixed(1)}`,
  )
}

void main()
