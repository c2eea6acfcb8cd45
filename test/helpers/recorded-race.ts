// A contender raced on one family draw in virtual time (bench/scheduler/family-race.ts), with
// every call it sent (when, which task, the answer's status) and the provider's calls in flight
// every 100 ms: what the oracle tests assert on.
import type { Contender } from '../../bench/scheduler/contenders'
import type { FamilyProvider, ProviderDraw } from '../../bench/scheduler/family'
import { raceDraw } from '../../bench/scheduler/family-race'
import { T0 } from '../../bench/scheduler/virtual-time'

export async function recordedRace(contender: Contender, draw: ProviderDraw) {
  const sends: { at: number; id: number; status: number }[] = []
  const inflight = new Map<number, number>()
  const result = await raceDraw(draw, {
    ...contender,
    drive: (run) => {
      const provider = run.provider as FamilyProvider
      const timer = setInterval(() => inflight.set(Date.now() - T0, provider.inflight()), 100)
      const call = run.call.bind(run)
      return contender
        .drive({
          ...run,
          call: (task) => {
            const at = Date.now() - T0
            return call(task).then((answer) => {
              sends.push({ at, id: task.id, status: answer.status })
              return answer
            })
          },
        })
        .finally(() => clearInterval(timer))
    },
  })
  /** Calls sent in [from, to) that were served, and that were refused. */
  const served = (from: number, to: number) =>
    sends.filter((s) => s.status === 200 && s.at >= from && s.at < to).length
  const refused = (from: number, to: number) =>
    sends.filter((s) => s.status !== 200 && s.at >= from && s.at < to).length
  return { result, sends, inflight, served, refused }
}
