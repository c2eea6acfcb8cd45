// An oracle that must probe to find a rise. The lagged oracle (lagged-oracle.ts) is told a rise a
// few round trips late without asking; a controller that reads no headers hears of one only from
// a call sent past what it believes (a cap's slot, a rate's spacing), and while nothing rose that
// call is refused. So this contender is told every fall at once (no refusal, no lag: more than any
// controller gets) and each bucket's shape, and a rise only when it probes:
// - a cap: one call past the cap it knows, every `callsPerProbe` calls' worth of round trips
//   (callsPerProbe / cap median round trips, at least one);
// - a rate nobody announces: it sends as a bucket at the rate it knows would (the provider's
//   burst, each call's true cost), and once `callsPerProbe` calls went since the last probe, the
//   next call that bucket holds back goes at once instead.
// A rate announced in headers is told by every answer: those draws go to the plain oracle.
// A probe the provider takes tells it the whole new cap or rate at once (again more than a
// controller learns); one refused costs one refusal, so while nothing rises its refused share is
// about 1 / callsPerProbe. What it reaches on the family bounds a controller that spends that
// share of its calls finding rises and nothing on falls. diag.ts races it (`--probing-oracle N`).
import { CONTENDERS, type Contender, type Run } from './contenders'
import type { BenchTask } from './providers'
import type { FamilyProvider } from './family'

const refused = (status: number) => status === 429 || status === 503 || status === 529

/**
 * The oracle that finds rises by probing, a probe per `callsPerProbe` calls. `backoff`: a cap's
 * probes start a round trip after each change it knows of (a fall, a probe taken) and double
 * their wait with each refused, up to the spacing above: the schedule Pacer's own probes follow
 * (probe-wait.ts), where a rise right after a fall is found soonest.
 */
export function probingOracle(callsPerProbe: number, backoff = false): Contender {
  return {
    name: `oracle probing for rises (a probe per ${callsPerProbe} calls${backoff ? ', backing off' : ''})`,
    drive(run) {
      const provider = run.provider as FamilyProvider
      if (provider.draw.binding === 'concurrency') {
        return probeCap(run, provider, callsPerProbe, backoff)
      }
      if (provider.draw.headers === 'none') return probeRate(run, provider, callsPerProbe)
      // A rate in headers is told by every answer: the plain oracle.
      return (CONTENDERS.find((c) => c.name.startsWith('oracle')) as Contender).drive(run)
    },
  }
}

/** Sends a task, puts it back at the head if refused, and drains again once it is answered. */
function sender(run: Run, queue: BenchTask[], done: () => void, drain: () => void) {
  let finished = 0
  let out = 0
  return {
    get out() {
      return out
    },
    send(task: BenchTask) {
      out++
      void run.call(task).then((answer) => {
        out--
        if (refused(answer.status)) queue.unshift(task)
        else if (++finished === run.tasks.length) done()
        drain()
      })
    },
  }
}

function probeCap(
  run: Run,
  provider: FamilyProvider,
  callsPerProbe: number,
  backoff: boolean,
): Promise<number> {
  const rttMs = provider.draw.latency.medianMs
  const queue = [...run.tasks]
  let known = provider.capacityNow()
  let refusedProbes = 0
  const waitMs = () => {
    const most = Math.max(1, callsPerProbe / Math.max(1, known))
    return (backoff ? Math.min(most, 2 ** refusedProbes) : most) * rttMs
  }
  let nextProbeAt = Date.now() + waitMs()
  let timer: NodeJS.Timeout | undefined
  return new Promise<number>((resolve) => {
    const drain = () => {
      clearTimeout(timer)
      timer = undefined
      if (provider.capacityNow() < known) {
        // Told a fall at once; the probes after it start over.
        refusedProbes = 0
        if (backoff) nextProbeAt = Math.min(nextProbeAt, Date.now() + waitMs())
      }
      known = Math.min(known, provider.capacityNow())
      while (queue.length > 0 && calls.out < known) calls.send(queue.shift() as BenchTask)
      // Calls still out above a cap that fell: a probe now would be refused, as it knows.
      if (queue.length === 0 || calls.out > known) return
      const wait = nextProbeAt - Date.now()
      if (wait > 0) {
        timer = setTimeout(drain, wait)
        return
      }
      // The provider decides at the call: its calls in flight say at once whether it took it.
      const before = provider.inflight()
      calls.send(queue.shift() as BenchTask)
      const taken = provider.inflight() > before
      if (taken) known = Math.max(known, provider.capacityNow())
      refusedProbes = taken ? 0 : refusedProbes + 1
      nextProbeAt = Date.now() + waitMs()
      if (taken) drain() // fills the cap it was told of, now
    }
    const calls = sender(run, queue, () => resolve(0), drain)
    for (const at of provider.changes) setTimeout(drain, at)
    drain()
  })
}

function probeRate(run: Run, provider: FamilyProvider, callsPerProbe: number): Promise<number> {
  // What the provider charges at admission (a reservation given back later is not counted: the
  // oracle's own bucket errs on the side of waiting there).
  const cost = (t: BenchTask) => provider.charged(t)
  const queue = [...run.tasks]
  // The rate it knows (ours, per minute), and its own bucket at that rate, from the provider's.
  let known = provider.capacityNow()
  let level = provider.books(Date.now()).level
  let at = Date.now()
  let sinceProbe = 0
  let timer: NodeJS.Timeout | undefined
  const settle = (now: number) => {
    const top = Math.max(provider.burstNow(), level)
    level = Math.min(top, level + (known / 60_000) * (now - at))
    at = now
  }
  const heldMs = (task: BenchTask) => {
    const need = Math.min(cost(task), provider.burstNow())
    return level >= need ? 0 : Math.ceil((need - level) / (known / 60_000))
  }
  return new Promise<number>((resolve) => {
    const drain = () => {
      clearTimeout(timer)
      timer = undefined
      const now = Date.now()
      settle(now)
      known = Math.min(known, provider.capacityNow()) // told every fall at once
      while (queue.length > 0) {
        const task = queue[0] as BenchTask
        const truth = provider.oracleDelayMs(task)
        const held = heldMs(task)
        if (truth === 0 && held === 0) {
          calls.send(queue.shift() as BenchTask)
          level -= cost(task)
          sinceProbe++
          continue
        }
        if (held > 0 && sinceProbe >= callsPerProbe) {
          // A probe: the call the rate it knows holds back goes now. Taken, it was told the rate.
          calls.send(queue.shift() as BenchTask)
          sinceProbe = 0
          if (truth === 0) {
            known = provider.capacityNow()
            level = provider.books(now).level
          }
          continue
        }
        timer = setTimeout(drain, Math.max(1, truth, held))
        return
      }
    }
    const calls = sender(run, queue, () => resolve(0), drain)
    for (const at of provider.changes) setTimeout(drain, at)
    drain()
  })
}
