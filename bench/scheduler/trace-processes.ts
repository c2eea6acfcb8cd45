// Follows one draw with N `pacer run` processes on one database (processes.ts) in virtual time:
// each second, the provider's cap and calls in flight and, per worker, its concurrency, calls held,
// sent and refused and its pace; each worker's limit changes and pauses. What `diag.ts --trace`
// does for one process.
//   node bin/run-ts.cjs bench/scheduler/trace-processes.ts DRAW_SEED [--short] [--processes 3]
//     [--from S --to S]
// `--short`: the draw as the live bench shortens it (15 s after 5 s of warm-up); `--from/--to`:
// seconds after the warm-up to print; CALLS=1 also prints every answer (status, when it was sent,
// the `remaining` it announced).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openDatabase } from '../../src/main/engine/db'
import { controllerFactory } from '../../src/main/engine/pacing/controllers'
import { Scheduler } from '../../src/main/engine/pacing/scheduler'
import { SqlitePacingStore } from '../../src/main/engine/pacing/store-sqlite'
import type { Contender } from './contenders'
import { viaScheduler } from './contenders'
import { describeDraw, drawProvider, type FamilyProvider } from './family'
import { raceDraw } from './family-race'
import { T0 } from './virtual-time'
import { shortDraw } from '../pacing-live/draws'

const arg = (flag: string, fallback: string) => {
  const at = process.argv.indexOf(flag)
  return at === -1 ? fallback : (process.argv[at + 1] as string)
}
const SEED = Number(process.argv[2])
const N = Number(arg('--processes', '3'))
const FROM = Number(arg('--from', '-1000'))
const TO = Number(arg('--to', '1000'))
let draw = drawProvider(SEED)
if (process.argv.includes('--short')) draw = shortDraw(draw, 15_000, 5000)

const contender: Contender = {
  name: 'traced processes',
  async drive(run) {
    const dir = mkdtempSync(path.join(tmpdir(), 'pacer-trace-'))
    const dbs = Array.from({ length: N }, () => openDatabase(path.join(dir, 'pacer.db')))
    const p = run.provider as FamilyProvider
    const at = () => ((Date.now() - T0 - p.draw.warmupMs) / 1000).toFixed(3).padStart(8)
    const inWindow = () => {
      const t = (Date.now() - T0 - p.draw.warmupMs) / 1000
      return t >= FROM && t <= TO
    }
    const sent = new Array(N).fill(0)
    const refused = new Array(N).fill(0)
    const schedulers = dbs.map(
      (db, i) =>
        new Scheduler({
          createController: controllerFactory('adaptive'),
          pacing: { random: run.random },
          store: new SqlitePacingStore({ db, lean: true }),
          worker: `w${i + 1}`,
        }),
    )
    schedulers.forEach((s, i) => {
      s.on('limit', (c) => {
        if (inWindow())
          console.log(
            `${at()} w${i + 1} limit ${c.from.toFixed(1)} -> ${c.to.toFixed(1)} ${c.reason}`,
          )
      })
      s.on('pause', (c) => {
        if (inWindow()) console.log(`${at()} w${i + 1} pause ${c.reason}`)
      })
    })
    const timer = setInterval(() => {
      if (inWindow()) {
        const ws = schedulers.map((s, i) => {
          const x = s.snapshot()[0]
          const pace = x?.pace ? JSON.stringify(x.pace.perMinute) : ''
          return `w${i + 1} c${x?.concurrency} f${x?.inflight} s${sent[i]} r${refused[i]} ${pace}`
        })
        console.log(`${at()} cap ${p.capacityNow()} inflight ${p.inflight()} | ${ws.join(' | ')}`)
      }
      sent.fill(0)
      refused.fill(0)
    }, 1000)
    try {
      const changes = await Promise.all(
        schedulers.map((s, i) => {
          const call = run.call.bind(run)
          const r = {
            ...run,
            tasks: run.tasks.filter((_, k) => k % N === i),
            call: async (t: Parameters<typeof call>[0]) => {
              sent[i]++
              const sentAt = at()
              const answer = await call(t)
              if (answer.status >= 429) refused[i]++
              if (process.env['CALLS'] && inWindow())
                console.log(
                  `${at()} w${i + 1} answer ${answer.status} sent ${sentAt} rem ${answer.headers['x-ratelimit-remaining-requests'] ?? answer.headers['x-ratelimit-remaining-tokens'] ?? answer.headers['anthropic-ratelimit-input-tokens-remaining'] ?? ''}`,
                )
              return answer
            },
          }
          return viaScheduler(r, s, true)
        }),
      )
      return changes.reduce((a, b) => a + b, 0)
    } finally {
      clearInterval(timer)
      for (const db of dbs) db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  },
}

async function main(): Promise<void> {
  console.log(describeDraw(draw), draw.tasks, 'tasks')
  const r = await raceDraw(draw, contender)
  console.log(`util ${r.utilization.toFixed(3)} thr ${(r.throttledShare * 100).toFixed(2)} %`)
}
void main()
