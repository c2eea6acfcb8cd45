// Where Pacer's refusals and lost utilization come from, over the family's draws: every refused
// call classified by its cause (a sibling of a refusal still on its way back, a capacity that
// fell, slow start, a probe, regrowth, recovery, the floor's pace, the announced pace, ...), and
// every moment of capacity left unused classified by what held the calls back (the limit while
// recovering, waiting to probe, paused, paced). Pacer alone, in virtual time, as diag.ts runs it.
//   node bin/run-ts.cjs bench/scheduler/diag-causes.ts [--seed S ...] [--family N]
// Several seeds add up; per binding (cap, rate nobody announces, announced rate), the refusals
// as counts and as mean points of the throttled share, and the loss as mean points of utilization.
import type { Contender } from './contenders'
import { viaScheduler } from './contenders'
import { AdaptiveController } from '../../src/main/engine/pacing/adaptive'
import { Scheduler } from '../../src/main/engine/pacing/scheduler'
import type { FamilyProvider, ProviderDraw } from './family'
import { drawFamily, raceDraw } from './family-race'
import { T0 } from './virtual-time'

const seeds = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--seed' ? [Number(a)] : []))
const at = process.argv.indexOf('--family')
const COUNT = at === -1 ? 60 : Number(process.argv[at + 1])
/** The sampling step of the lost capacity (virtual ms). */
const STEP_MS = 20

type Kind = 'cap' | 'rate, none' | 'rate, announced'
const kindOf = (d: ProviderDraw): Kind =>
  d.binding === 'concurrency' ? 'cap' : d.headers === 'none' ? 'rate, none' : 'rate, announced'

interface Send {
  sentAt: number
  answerAt: number
  refused: boolean
  status: number
  retry: boolean
  cause: string
}

const valueAt = (phases: { fromMs: number; value: number }[], offset: number) => {
  let v = (phases[0] as { value: number }).value
  for (const p of phases) if (offset >= p.fromMs) v = p.value
  return v
}
/** The capacity that is ours at `t` (slots, or the rate after the tenant). */
const capacityAt = (d: ProviderDraw, t: number) => {
  const off = Math.max(0, Math.min(t - T0 - d.warmupMs, d.durationMs - 1))
  const ours = valueAt(d.phases, off) * (1 - (d.tenant ? valueAt(d.tenant, off) : 0))
  return d.binding === 'concurrency' ? Math.max(1, Math.floor(ours + 0.5)) : ours
}

/** The controller's state at a send, as one word. */
function stateOf(c: AdaptiveController, paced: { learned?: boolean } | undefined): string {
  if (paced?.learned) return 'floor pace'
  if (paced) return 'announced pace'
  const m = c.memory
  if (m.slowStart) return 'slow start'
  if (m.probing) return 'probe'
  const fast = (c.exportState().memory?.['fastUntil'] as number) > c.limit
  if (m.ceiling === null) return fast ? 'regrowth after a probe' : 'growth'
  if (c.limit < m.ceiling - 1 - 1e-9) return 'recovery after a cut'
  return 'held below a refused level'
}

interface DrawBooks {
  kind: Kind
  attempts: number
  refusals: Map<string, number>
  retries: number
  overload: number
  warmup: number
  lost: Map<string, number>
  allowed: number
}

function instrumented(books: DrawBooks): Contender {
  return {
    name: 'Pacer (classified)',
    drive: (run) => {
      let ctl: AdaptiveController | undefined
      const scheduler = new Scheduler({
        createController: (partition, params, limit) =>
          (ctl = new AdaptiveController(partition, params, { limit })),
        pacing: { random: run.random },
      })
      const p = run.provider as FamilyProvider
      const d = p.draw
      const start = T0 + d.warmupMs
      const end = start + d.durationMs
      const sends: Send[] = []
      const refusedTasks = new Set<number>()
      const call = run.call.bind(run)
      run.call = async (task) => {
        const now = Date.now()
        const snap = scheduler.snapshot()[0]
        const pace = snap?.pace
        const before = capacityAt(d, now - 3 * (ctl?.memory.srtt ?? d.latency.medianMs))
        const fell = capacityAt(d, now) < before - 1e-9
        const state = ctl ? stateOf(ctl, pace) : 'slow start'
        const send: Send = {
          sentAt: now,
          answerAt: Infinity,
          refused: false,
          status: 0,
          retry: refusedTasks.has(task.id),
          cause: fell ? `a fall (${state})` : state,
        }
        sends.push(send)
        const answer = await call(task)
        send.answerAt = Date.now()
        send.status = answer.status
        send.refused = answer.status === 429 || answer.status === 503 || answer.status === 529
        if (send.refused) refusedTasks.add(task.id)
        return answer
      }
      // The capacity left unused, sampled: slots not in flight (caps), refill lost to a full
      // bucket (rates), each step put down to what held the calls back at its start.
      let prev = p.books(T0)
      const timer = setInterval(() => {
        const now = Date.now()
        if (now < start || now > end) {
          prev = p.books(now)
          return
        }
        const snap = scheduler.snapshot()[0]
        let why = 'no partition yet'
        if (snap && ctl) {
          if (snap.pausedUntil !== null && snap.pausedUntil > now) why = 'paused'
          else if (snap.inflight >= snap.concurrency) {
            why = `limit: ${stateOf(ctl, undefined)}`
            const ceiling = ctl.memory.ceiling
            const above = d.binding === 'concurrency' && ceiling !== null
            if (above && capacityAt(d, now) >= ceiling) why += ', capacity above it'
          } else if (snap.waiting > 0) why = snap.pace?.learned ? 'floor pace' : 'announced pace'
          else why = 'nothing waiting'
        }
        let loss: number
        if (d.binding === 'concurrency') {
          const cap = p.capacityNow()
          loss = Math.max(0, cap - p.inflight()) * STEP_MS
          books.allowed += cap * STEP_MS
        } else {
          const b = p.books(now)
          loss = b.overflow - prev.overflow
          prev = b
        }
        books.lost.set(why, (books.lost.get(why) ?? 0) + loss)
      }, STEP_MS)
      return viaScheduler(run, scheduler, true).finally(() => {
        clearInterval(timer)
        if (d.binding !== 'concurrency') {
          const b = p.books(Math.min(Date.now(), end))
          books.lost.set('left in the bucket', b.level)
          books.allowed = b.served + b.overflow + Math.max(0, b.level)
        }
        classify(sends, books, start)
      })
    },
  }
}

/** Siblings first: a refusal sent while an earlier refused call was still on its way back. */
function classify(sends: Send[], books: DrawBooks, start: number): void {
  let pendingUntil = -Infinity
  let firstAt = -Infinity
  for (const s of sends) {
    books.attempts++
    if (!s.refused) continue
    const instant = s.sentAt === firstAt ? 'same instant' : 'later'
    const cause = s.sentAt < pendingUntil ? `sibling, ${instant} (${s.cause})` : s.cause
    if (s.sentAt >= pendingUntil) firstAt = s.sentAt
    pendingUntil = Math.max(pendingUntil, s.answerAt)
    books.refusals.set(cause, (books.refusals.get(cause) ?? 0) + 1)
    if (s.retry) books.retries++
    if (s.status !== 429) books.overload++
    if (s.sentAt < start) books.warmup++
  }
}

async function main(): Promise<void> {
  const all: DrawBooks[] = []
  for (const seed of seeds.length ? seeds : [0]) {
    for (const draw of drawFamily(COUNT, seed + 1)) {
      const b: DrawBooks = {
        kind: kindOf(draw),
        attempts: 0,
        refusals: new Map(),
        retries: 0,
        overload: 0,
        warmup: 0,
        lost: new Map(),
        allowed: 0,
      }
      const r = await raceDraw(draw, instrumented(b))
      b.allowed = b.allowed || 1
      all.push(b)
      const top = [...b.refusals].sort((x, y) => y[1] - x[1])[0]
      console.error(
        `#${draw.seed} ${b.kind} util ${r.utilization.toFixed(3)} thr ${(r.throttledShare * 100).toFixed(2)} %` +
          (top ? ` top ${top[0]} ${top[1]}` : ''),
      )
    }
  }
  report(all)
}

function report(all: DrawBooks[]): void {
  const kinds: Kind[] = ['cap', 'rate, none', 'rate, announced']
  const n = (k: Kind) => all.filter((b) => b.kind === k).length
  console.log(`\nREFUSALS (count / mean points of throttled share per draw of the kind), draws:`)
  console.log(kinds.map((k) => `${k} ${n(k)}`).join(', '))
  const causes = new Set(all.flatMap((b) => [...b.refusals.keys()]))
  const row = (label: string, f: (b: DrawBooks) => [number, number]) => {
    const cells = kinds.map((k) => {
      const rows = all.filter((b) => b.kind === k).map(f)
      const count = rows.reduce((s, [c]) => s + c, 0)
      const pts = (rows.reduce((s, [, x]) => s + x, 0) / Math.max(1, rows.length)) * 100
      return `${String(count).padStart(6)} ${pts.toFixed(3).padStart(6)}`
    })
    const count = all.map(f).reduce((s, [c]) => s + c, 0)
    const pts = (all.map(f).reduce((s, [, x]) => s + x, 0) / all.length) * 100
    console.log(
      `${label.padEnd(46)}${cells.join(' |')} | ${String(count).padStart(6)} ${pts.toFixed(3)}`,
    )
  }
  const high = all.filter((b) => sum(b.refusals) / Math.max(1, b.attempts) > 0.03)
  for (const c of [...causes].sort()) {
    row(c, (b) => [b.refusals.get(c) ?? 0, (b.refusals.get(c) ?? 0) / Math.max(1, b.attempts)])
  }
  row('ALL', (b) => [sum(b.refusals), sum(b.refusals) / Math.max(1, b.attempts)])
  row('  of which retries of a refused call', (b) => [
    b.retries,
    b.retries / Math.max(1, b.attempts),
  ])
  row('  of which 503/529', (b) => [b.overload, b.overload / Math.max(1, b.attempts)])
  row('  of which in the warm-up', (b) => [b.warmup, b.warmup / Math.max(1, b.attempts)])
  console.log(`draws over 3 % throttled: ${high.length}; their refusals by cause:`)
  for (const c of [...causes].sort()) {
    const count = high.reduce((s, b) => s + (b.refusals.get(c) ?? 0), 0)
    if (count > 0) console.log(`  ${c.padEnd(44)}${count}`)
  }
  console.log(`\nLOST UTILIZATION (mean points of utilization per draw of the kind)`)
  const reasons = new Set(all.flatMap((b) => [...b.lost.keys()]))
  for (const r of [...reasons, 'ALL'].sort()) {
    const cells = kinds.map((k) => {
      const rows = all.filter((b) => b.kind === k)
      const v = rows.map((b) => (r === 'ALL' ? sum(b.lost) : (b.lost.get(r) ?? 0)) / b.allowed)
      return ((v.reduce((s, x) => s + x, 0) / Math.max(1, rows.length)) * 100)
        .toFixed(2)
        .padStart(7)
    })
    console.log(`${r.padEnd(46)}${cells.join(' |')}`)
  }
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((s, x) => s + x, 0)

void main()
