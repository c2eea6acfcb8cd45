// An oracle that must probe to find a rise. The lagged oracle (lagged-oracle.ts) is told a cap's
// rise a few round trips late without asking; a controller that reads no headers hears of a rise
// only from a call sent past the cap it believes, and each such call while the cap has not risen
// is refused. So this contender is told every fall at once (no refusal, no lag: more than any
// controller gets), and a rise only when it probes: one call past the cap it knows, every
// `callsPerProbe` calls' worth of round trips (callsPerProbe / cap median round trips, at least
// one). A probe the provider takes tells it the whole new cap at once (again more than a
// controller learns, which knows only that one more call fit); a refused one costs one refusal,
// so on a stable cap its refused share is about 1 / callsPerProbe. What it reaches on the family
// bounds a controller that spends that share of its calls finding rises, and nothing on falls.
// Rate draws go to the plain oracle: the bound is about caps. diag.ts races it
// (`--probing-oracle N`).
import type { Contender } from './contenders'
import { CONTENDERS } from './contenders'
import type { BenchTask } from './providers'
import type { FamilyProvider } from './family'

const refused = (status: number) => status === 429 || status === 503 || status === 529

/** The oracle that finds a cap's rises by probing, a probe per `callsPerProbe` calls. */
export function probingOracle(callsPerProbe: number): Contender {
  const plain = CONTENDERS.find((c) => c.name.startsWith('oracle')) as Contender
  return {
    name: `oracle probing for rises (a probe per ${callsPerProbe} calls)`,
    drive(run) {
      const provider = run.provider as FamilyProvider
      if (provider.draw.binding !== 'concurrency') return plain.drive(run)
      const rttMs = provider.draw.latency.medianMs
      const queue = [...run.tasks]
      let known = provider.capacityNow()
      let out = 0
      let finished = 0
      const waitMs = () => Math.max(1, callsPerProbe / Math.max(1, known)) * rttMs
      let nextProbeAt = Date.now() + waitMs()
      let timer: NodeJS.Timeout | undefined
      return new Promise<number>((resolve) => {
        const send = (task: BenchTask) => {
          out++
          void run.call(task).then((answer) => {
            out--
            if (refused(answer.status)) queue.unshift(task)
            else if (++finished === run.tasks.length) resolve(0)
            drain()
          })
        }
        const drain = () => {
          clearTimeout(timer)
          timer = undefined
          known = Math.min(known, provider.capacityNow()) // told every fall at once
          while (queue.length > 0 && out < known) send(queue.shift() as BenchTask)
          // Calls still out above a cap that fell: a probe now would be refused, as it knows.
          if (queue.length === 0 || out > known) return
          const wait = nextProbeAt - Date.now()
          if (wait > 0) {
            timer = setTimeout(drain, wait)
            return
          }
          // The provider decides at the call: its calls in flight say at once whether it took it.
          const before = provider.inflight()
          send(queue.shift() as BenchTask)
          const taken = provider.inflight() > before
          if (taken) known = Math.max(known, provider.capacityNow())
          nextProbeAt = Date.now() + waitMs()
          if (taken) drain() // fills the cap it was told of, now
        }
        for (const at of provider.changes) setTimeout(drain, at)
        drain()
      })
    },
  }
}
