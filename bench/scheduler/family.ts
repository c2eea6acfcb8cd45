// A family of simulated providers, drawn from a seed: pacing is judged on a space of provider
// habits, not on three points of it. Each dimension is drawn independently:
// - the binding limit: a concurrency cap (1-64 slots), or a rate limit on requests or tokens;
// - its schedule: 2-6 phases of 2 s to 120 s, rising and falling, often a rise right after a fall;
// - refusals: 429, 503, 529 or a mix, with `retry-after: 1`, a sub-second `retry-after-ms`, the
//   exact wait, or nothing;
// - a rate limit's enforcement: a bucket whose burst is a minute, ten seconds, a second or a
//   single call (OpenAI's "quantized" limits), announced per minute in OpenAI-style headers,
//   Anthropic-style headers or not at all, with `remaining` current or one answer late;
// - latency: fixed, log-normal, heavy-tailed (a few calls 20x the median), or growing with load;
// - a second tenant on the same key taking a varying share of the budget;
// - how a token limit counts a call's output: what the call used, charged when it is admitted (an
//   idealisation: a proxy that counts after the answer comes close); `max_tokens` reserved at
//   admission and kept (OpenAI counts input + max_tokens against the minute); or reserved and the
//   unused part given back at the answer (Anthropic's output estimate from max_tokens, adjusted at
//   the end; Azure OpenAI). Drawn from a stream of its own, so every other dimension of a seed is
//   what it was before this one.
// Each provider keeps the books where the capacity lives: what it served of what it allowed us
// (the tenant's share is not ours), and how long a raised capacity took to be used again.
import type { ProviderResponse } from '../../src/main/engine/core/types'
import { seededRandom } from '../../test/helpers/random'
import type { BenchTask, Phase, SimulatedProvider } from './providers'
import { T0 } from './virtual-time'

export type Binding = 'concurrency' | 'requests' | 'tokens'
export type Burst = 'minute' | 'ten-seconds' | 'second' | 'single'
export type HeaderStyle = 'openai' | 'anthropic' | 'none'
export type RetryStyle = 'none' | 'one-second' | 'ms' | 'exact'
export type RefusalStatus = 429 | 503 | 529 | 'mix'
export type LatencyKind = 'fixed' | 'lognormal' | 'heavy' | 'load'
export type TokenCharge = 'used' | 'reserve' | 'reserve-refund'

/** One drawn provider: everything that makes it behave as it does. */
export interface ProviderDraw {
  seed: number
  /**
   * A warm-up at the first level before the schedule, not on the books: the figures are about
   * following a provider's changes, not about a run's first seconds.
   */
  warmupMs: number
  binding: Binding
  /** Concurrency caps, or limits per minute (requests or input + output tokens). */
  phases: Phase[]
  durationMs: number
  /** How the rate limit is enforced (rate bindings). */
  burst: Burst
  /** How it is announced (rate bindings; a concurrency cap is never announced). */
  headers: HeaderStyle
  /** `remaining` reports the count as of the previous answer. */
  lag: boolean
  refusal: { status: RefusalStatus; retry: RetryStyle }
  latency: { kind: LatencyKind; medianMs: number }
  /** Another tenant's share of the key's budget over time (0 to 0.5), or none. */
  tenant: Phase[] | null
  /**
   * What a token limit charges for a call's output (tokens bindings; 'used' otherwise): what it
   * used, or its `max_tokens` (the task's output estimate) reserved at admission, kept or with the
   * unused part given back at the answer.
   */
  charge: TokenCharge
  tasks: number
}

const BURST_MS: Record<Burst, number> = {
  minute: 60_000,
  'ten-seconds': 10_000,
  second: 1000,
  single: 0,
}

const pick = <T>(random: () => number, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)] as T
const logUniform = (random: () => number, lo: number, hi: number) => lo * (hi / lo) ** random()
const weighted = <T>(random: () => number, items: readonly [T, number][]): T => {
  let x = random() * items.reduce((s, [, w]) => s + w, 0)
  for (const [item, w] of items) if ((x -= w) < 0) return item
  return (items[items.length - 1] as [T, number])[0]
}

/** Every draw's warm-up (ProviderDraw.warmupMs). */
export const WARMUP_MS = 30_000

/** The range each binding's limit is drawn from. */
const LIMITS: Record<Binding, [number, number]> = {
  concurrency: [1, 64],
  requests: [30, 3000],
  tokens: [60_000, 2_000_000],
}

/** Draws one provider from `seed`; the same seed, the same provider. */
export function drawProvider(seed: number): ProviderDraw {
  const r = seededRandom(seed * 2654435761)
  const binding = weighted<Binding>(r, [
    ['concurrency', 0.45],
    ['requests', 0.35],
    ['tokens', 0.2],
  ])
  const [lo, hi] = LIMITS[binding]
  const level = () => {
    const v = logUniform(r, lo, hi)
    return binding === 'concurrency' ? Math.max(1, Math.round(v)) : Math.round(v)
  }
  const count = 2 + Math.floor(r() * 5)
  const values = Array.from({ length: count }, level)
  // Half of the schedules hold a fall then a rise to 2-4 times the low level, right after it.
  if (r() < 0.5) {
    const at = Math.floor(r() * (count - 1))
    const high = values[at] as number
    const low = Math.max(binding === 'concurrency' ? 1 : lo, Math.round(high * (0.25 + r() * 0.4)))
    values[at + 1] = low
    values[at + 2 < count ? at + 2 : at + 1] = Math.min(hi, Math.round(low * (2 + r() * 2)))
    if (at + 2 >= count) values[at + 1] = low
  }
  let t = 0
  const phases: Phase[] = values.map((value) => {
    const phase = { fromMs: t, value }
    t += Math.round(logUniform(r, 2000, 120_000))
    return phase
  })
  const durationMs = t
  const medianMs = Math.round(logUniform(r, 200, 3000))
  const latency = { kind: pick<LatencyKind>(r, ['fixed', 'lognormal', 'heavy', 'load']), medianMs }
  const status = weighted<RefusalStatus>(r, [
    [429, 0.7],
    [503, 0.1],
    [529, 0.1],
    ['mix', 0.1],
  ])
  let retry = weighted<RetryStyle>(r, [
    ['none', 0.3],
    ['one-second', 0.3],
    ['ms', 0.2],
    ['exact', 0.2],
  ])
  // A concurrency cap knows no wait to announce: it says "1 s", a guess, or nothing.
  if (binding === 'concurrency' && (retry === 'exact' || retry === 'ms')) retry = 'one-second'
  const burst = pick<Burst>(r, ['minute', 'ten-seconds', 'second', 'single'])
  const headers =
    binding === 'concurrency'
      ? 'none'
      : weighted<HeaderStyle>(r, [
          ['openai', 0.4],
          ['anthropic', 0.3],
          ['none', 0.3],
        ])
  const lag = r() < 0.3
  let tenant: Phase[] | null = null
  if (r() < 0.3) {
    const parts = 1 + Math.floor(r() * 3)
    tenant = Array.from({ length: parts }, (_, i) => ({
      fromMs: Math.round((durationMs * i) / parts),
      value: Math.round(r() * 50) / 100,
    }))
  }

  // Its own stream: the dimensions above are drawn as they were before it.
  const c = seededRandom(seed * 2654435761 + 17)
  const charge =
    binding === 'tokens' ? pick<TokenCharge>(c, ['used', 'reserve', 'reserve-refund']) : 'used'

  // The warm-up serves at most a few hundred calls: a fast provider needs only seconds of it.
  const first = values[0] as number
  const callsPerMs =
    binding === 'concurrency'
      ? first / medianMs
      : first / 60_000 / (binding === 'tokens' ? MEAN_TASK_TOKENS : 1)
  const warmupMs = Math.round(Math.min(WARMUP_MS, Math.max(5000, 300 / callsPerMs)))
  return {
    seed,
    warmupMs,
    binding,
    phases,
    durationMs,
    burst,
    headers,
    lag,
    refusal: { status, retry },
    latency,
    tenant,
    charge,
    tasks: estimateTasks(
      binding,
      [{ fromMs: 0, value: first }, ...phases.map((p) => ({ ...p, fromMs: p.fromMs + warmupMs }))],
      durationMs + warmupMs,
      medianMs,
    ),
  }
}

/** Mean tokens of a drawn task (input log-uniform 200-4,000, output 50-600). */
const MEAN_TASK_TOKENS = 1300

/** Enough tasks to keep the provider busy for its whole schedule, within what a bench can run. */
function estimateTasks(binding: Binding, phases: Phase[], durationMs: number, medianMs: number) {
  // A rate limit's bucket is full at the start: a burst of work on top of its refill.
  const first = (phases[0] as Phase).value
  let work = binding === 'requests' ? first : binding === 'tokens' ? first / MEAN_TASK_TOKENS : 0
  phases.forEach((p, i) => {
    const until = (phases[i + 1]?.fromMs ?? durationMs) - p.fromMs
    if (binding === 'concurrency') work += (p.value * until) / medianMs
    else if (binding === 'requests') work += (p.value * until) / 60_000
    else work += (p.value * until) / 60_000 / MEAN_TASK_TOKENS
  })
  return Math.round(Math.min(6000, Math.max(200, work * 1.25)))
}

/** The draw's tasks: sizes, what a caller can estimate before sending, and base latencies. */
export function drawTasks(draw: ProviderDraw): BenchTask[] {
  const r = seededRandom(draw.seed * 40503 + 7)
  const normal = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
  const { kind, medianMs } = draw.latency
  return Array.from({ length: draw.tasks }, (_, id) => {
    const input = Math.round(logUniform(r, 200, 4000))
    const output = Math.round(50 + r() * 550)
    let latency = medianMs
    if (kind === 'lognormal') latency = medianMs * Math.exp(0.5 * normal())
    if (kind === 'heavy') latency = medianMs * Math.exp(0.2 * normal()) * (r() < 0.03 ? 20 : 1)
    return {
      id,
      inputTokens: input,
      outputTokens: output,
      estimate: { inputTokens: Math.round(input * (0.9 + r() * 0.2)), outputTokens: 600 },
      latencyMs: Math.max(20, Math.round(latency)),
    }
  })
}

function valueAt(phases: readonly Phase[], offset: number): number {
  let value = (phases[0] as Phase).value
  for (const p of phases) if (offset >= p.fromMs) value = p.value
  return value
}

/** Go-style duration as OpenAI sends it (`120ms`, `59.880s`). */
function goDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms))
  return whole < 1000 ? `${whole}ms` : `${(whole / 1000).toFixed(3)}s`
}

/** A rise of the capacity that is ours, and when it was used again (for time to regain). */
export interface Rise {
  at: number
  to: number
  /** Ms until 90 % of it was in use; null while not yet, censored at the next change. */
  regainedMs: number | null
  censoredMs: number
}

export interface FamilyProvider extends SimulatedProvider {
  readonly draw: ProviderDraw
  /** The rises of a concurrency cap that is ours (after the tenant), with their regain times. */
  rises(): Rise[]
  /** Calls in flight of ours, and the cap that is ours now (concurrency bindings). */
  inflight(): number
  capacityNow(): number
  /** What the provider charges a call when it admits it (its max_tokens, where it reserves). */
  charged(task: BenchTask): number
  /** A rate's burst now: what its bucket holds at most (probing-oracle.ts is told its shape). */
  burstNow(): number
  /** A rate's books at `at`: served, refill lost to a full bucket, and what the bucket holds. */
  books(at: number): { served: number; overflow: number; level: number }
  /**
   * For the oracle told the capacity `lagMs` late (lagged-oracle.ts): `oracleDelayMs` as seen by
   * one who knows the provider exactly as it was `lagMs` ago, and only its own calls since.
   */
  laggedOracleDelayMs(task: BenchTask, lagMs: number): number
}

/**
 * The provider a draw describes, on the global clock from `origin`: T0 in virtual time, the
 * moment a live server starts in real time (bench/pacing-live.ts).
 */
export function familyProvider(draw: ProviderDraw, origin = T0): FamilyProvider {
  const r = seededRandom(draw.seed * 69069 + 3)
  // The books open after the warm-up; the schedule's offsets count from there.
  const start = origin + draw.warmupMs
  const end = start + draw.durationMs
  const share = (now: number) => (draw.tenant ? valueAt(draw.tenant, Math.max(0, now - start)) : 0)
  const limit = (now: number) => valueAt(draw.phases, Math.max(0, Math.min(now, end - 1) - start))
  const concurrency = draw.binding === 'concurrency'
  // Ours after the tenant: its share of the slots, or of the refill.
  const capNow = (now: number) =>
    Math.max(1, Math.floor(limit(now) * (1 - share(now)) + (concurrency ? 0.5 : 0)))
  /** A rate binding's refill per ms that is ours. */
  const rateAt = (now: number) => (limit(now) * (1 - share(now))) / 60_000
  /** What a call is charged when it is admitted: its output, or the max_tokens reserved for it. */
  const cost = (t: BenchTask) => {
    if (draw.binding !== 'tokens') return draw.binding === 'requests' ? 1 : 0
    const output = draw.charge === 'used' ? t.outputTokens : t.estimate.outputTokens
    return t.inputTokens + output
  }
  /** What a reserve-refund provider gives back at the answer: the reserved output not used. */
  const refundOf = (t: BenchTask) =>
    draw.charge === 'reserve-refund' && draw.binding === 'tokens'
      ? Math.max(0, cost(t) - t.inputTokens - t.outputTokens)
      : 0

  let inflight = 0
  let last = origin
  let served = 0
  let allowed = 0
  // Rate limits: the enforced bucket (burst per `draw.burst`) and the announced minute bucket.
  // A single call's worth (quantized): one request, or a call of the mean size.
  const single = draw.binding === 'requests' ? 1 : MEAN_TASK_TOKENS
  const burstOf = (now: number) => {
    const ms = BURST_MS[draw.burst]
    return ms === 0 ? single : Math.max(single, (limit(now) * ms) / 60_000)
  }
  let level = concurrency ? 0 : burstOf(origin)
  // What the bucket held after each call it served (the first entry: the bucket at the origin).
  // Only the lagged oracle reads it: the bucket as it was a lag ago is one of these, refilled.
  const spends: { at: number; level: number; cost: number }[] = [{ at: origin, level, cost: 0 }]
  // The cost of each call refused and not answered yet: the caller counts it as in flight (or
  // spent) until it hears, as it counts any call it sent.
  const refusing: number[] = []
  let announced = concurrency ? 0 : limit(origin)
  let overflow = 0
  let opening = false
  let startLevel = 0
  const rises: Rise[] = []
  let lastCap = concurrency ? capNow(origin) : 0

  // Whole stretches between the changes of limit and tenant: few, so a loop over ms is not needed.
  const offsets = [start, ...[...draw.phases, ...(draw.tenant ?? [])].map((p) => start + p.fromMs)]
  const stretchEnd = (a: number, to: number) =>
    Math.min(to, ...offsets.filter((x) => x > a), Infinity)
  /**
   * The bucket refilled from `a` to `b` at `a`'s rate, up to its burst: a bucket above its burst
   * (the burst fell) keeps what it holds and gains nothing.
   */
  const refilled = (from: number, a: number, b: number, rate = rateAt(a), burst = burstOf(a)) => {
    const filled = from + rate * (b - a)
    const top = Math.max(burst, from)
    return { filled, top, level: Math.min(top, filled) }
  }
  const advance = (now: number) => {
    const to = Math.min(now, end)
    let a = last
    while (a < to) {
      const b = stretchEnd(a, to)
      const cap = capNow(a)
      if (concurrency) {
        if (a >= start) {
          served += Math.min(inflight, cap) * (b - a)
          allowed += cap * (b - a)
        }
      } else {
        // The bucket as it is when the books open is the first allowance on them.
        if (a < start && b >= start) opening = true
        const rate = rateAt(a)
        const step = refilled(level, a, b)
        if (a >= start) overflow += Math.max(0, step.filled - step.top)
        level = step.level
        announced = Math.min(limit(a), announced + rate * (b - a))
      }
      a = b
      if (!concurrency && opening) {
        startLevel = Math.max(0, level)
        opening = false
      }
      if (concurrency) noteCap(a)
    }
    last = Math.max(last, to)
  }
  const noteCap = (now: number) => {
    if (now >= end || now < start) return
    const cap = capNow(now)
    if (cap !== lastCap) {
      const open = rises[rises.length - 1]
      if (open && open.regainedMs === null && open.censoredMs === 0) open.censoredMs = now - open.at
      if (cap >= lastCap * 1.5 && cap - lastCap >= 1) {
        rises.push({ at: now, to: cap, regainedMs: null, censoredMs: 0 })
      }
      lastCap = cap
    }
  }
  const noteInflight = (now: number) => {
    if (now < start) return
    const open = rises[rises.length - 1]
    if (open && open.regainedMs === null && open.censoredMs === 0) {
      if (inflight >= Math.ceil(0.9 * open.to)) open.regainedMs = now - open.at
    }
  }

  let previous: Record<string, string> = {}
  const headersNow = (now: number): Record<string, string> => {
    if (draw.headers === 'none' || concurrency) return {}
    const l = limit(now)
    const remaining = String(Math.max(0, Math.floor(announced)))
    const rate = (l * (1 - share(now))) / 60_000
    const fullIn = Math.max(0, (l - announced) / rate)
    const h: Record<string, string> = {}
    const dims = draw.binding === 'requests' ? ['requests'] : ['tokens']
    for (const dim of dims) {
      if (draw.headers === 'openai') {
        h[`x-ratelimit-limit-${dim}`] = String(l)
        h[`x-ratelimit-remaining-${dim}`] = remaining
        h[`x-ratelimit-reset-${dim}`] = goDuration(fullIn)
      } else {
        const d = dim === 'tokens' ? 'input-tokens' : dim
        h[`anthropic-ratelimit-${d}-limit`] = String(l)
        h[`anthropic-ratelimit-${d}-remaining`] = remaining
        const at = Math.ceil((now + fullIn) / 1000) * 1000
        h[`anthropic-ratelimit-${d}-reset`] = new Date(at).toISOString().replace('.000Z', 'Z')
      }
    }
    if (!draw.lag) return h
    const late = previous
    previous = h
    return Object.keys(late).length > 0 ? late : h
  }

  const latencyOf = (t: BenchTask, now: number) => {
    if (draw.latency.kind !== 'load') return t.latencyMs
    // A server that slows down as it fills, before it refuses.
    const fill = concurrency ? inflight / capNow(now) : Math.min(1, inflight / 32)
    return Math.round(t.latencyMs * (1 + 1.5 * fill * fill))
  }

  const refusal = (now: number, waitMs: number | undefined): ProviderResponse => {
    const { status, retry } = draw.refusal
    const code = status === 'mix' ? (r() < 0.7 ? 429 : r() < 0.5 ? 503 : 529) : status
    const headers = { ...headersNow(now) }
    if (retry === 'one-second') headers['retry-after'] = '1'
    if (retry === 'ms' && waitMs !== undefined) {
      headers['retry-after-ms'] = String(Math.max(1, Math.ceil(waitMs)))
    }
    if (retry === 'exact' && waitMs !== undefined) {
      headers['retry-after'] = String(Math.max(1, Math.ceil(waitMs / 1000)))
      if (draw.headers === 'openai') headers['retry-after-ms'] = String(Math.ceil(waitMs))
    }
    return { status: code, headers, error: code === 429 ? 'rate limited' : 'overloaded' }
  }

  /**
   * The unused part of a reservation back in the bucket, up to its burst (what a full bucket
   * cannot hold is lost, as refill is) and in the announced count, up to the limit.
   */
  const giveBack = (now: number, back: number, booked: boolean) => {
    if (back <= 0 || now >= end) return
    const top = Math.max(burstOf(now), level)
    const kept = Math.min(back, Math.max(0, top - level))
    level += kept
    announced = Math.min(limit(now), announced + back)
    if (booked) {
      served -= back
      overflow += back - kept
    }
    spends.push({ at: now, level, cost: -kept })
  }

  const fits = (t: BenchTask, now: number) => level >= Math.min(cost(t), burstOf(now))
  const waitFor = (t: BenchTask, now: number) => {
    const need = Math.min(cost(t), burstOf(now)) - level
    return Math.max(0, need / rateAt(now))
  }

  /** What the bucket held at `at` (not before the origin): the last call served, refilled since. */
  const levelAt = (at: number) => {
    let lo = 0
    let hi = spends.length - 1
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2)
      if ((spends[mid] as { at: number }).at <= at) lo = mid
      else hi = mid - 1
    }
    let { at: a, level: held } = spends[lo] as { at: number; level: number }
    while (a < at) {
      const b = stretchEnd(a, at)
      held = refilled(held, a, b).level
      a = b
    }
    return { held, next: lo + 1 }
  }

  const later = <T>(ms: number, answer: () => T): Promise<T> =>
    new Promise((resolve) => setTimeout(() => resolve(answer()), ms))

  return {
    draw,
    changes: [
      ...new Set([...draw.phases, ...(draw.tenant ?? [])].map((p) => draw.warmupMs + p.fromMs)),
    ].sort((a, b) => a - b),
    rises: () => rises,
    inflight: () => inflight,
    capacityNow: () => capNow(Date.now()),
    charged: cost,
    burstNow: () => burstOf(Date.now()),
    books(at) {
      advance(at)
      return { served, overflow, level }
    },
    call(task) {
      const now = Date.now()
      advance(now)
      const usage = {
        inputTokens: task.inputTokens,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: task.outputTokens,
      }
      if (now >= end) {
        // The schedule is over and the books closed: the rest of the batch goes through at once.
        return later(1, () => ({ status: 200, headers: {}, text: 'ok', usage }))
      }
      if (concurrency ? inflight >= capNow(now) : !fits(task, now)) {
        const answer = refusal(now, concurrency ? undefined : waitFor(task, now))
        refusing.push(cost(task))
        return later(5 + r() * 25, () => {
          refusing.splice(refusing.indexOf(cost(task)), 1)
          return answer
        })
      }
      if (!concurrency) {
        level -= cost(task)
        announced -= cost(task)
        if (now >= start) served += cost(task)
        spends.push({ at: now, level, cost: cost(task) })
      }
      // On the books if admitted after they opened: a reservation given back comes off them then.
      const booked = now >= start
      inflight++
      noteInflight(now)
      const headers = headersNow(now)
      return later(latencyOf(task, now), () => {
        const at = Date.now()
        advance(at)
        inflight--
        giveBack(at, refundOf(task), booked)
        return { status: 200, headers, text: 'ok', usage }
      })
    },
    oracleDelayMs(task) {
      const now = Date.now()
      advance(now)
      if (now >= end) return 0
      if (concurrency) return inflight < capNow(now) ? 0 : Infinity
      return Math.ceil(waitFor(task, now))
    },
    laggedOracleDelayMs(task, lagMs) {
      const now = Date.now()
      advance(now)
      if (now >= end) return 0
      const seen = Math.max(origin, now - lagMs)
      if (concurrency) return inflight + refusing.length < capNow(seen) ? 0 : Infinity
      // Replayed from the real bucket, not a second bucket run on the schedule shifted by the lag:
      // a shifted bucket that believes in more than the real one admits calls the provider
      // refuses, a refused call debits neither, and the two never meet again. Replayed, the view
      // is exact a lag ago and errs only by what the lag hides: the bucket then, less our own
      // calls since (a caller knows its calls at once, those on their way to a refusal too),
      // refilled at the rate and up to the burst of then.
      const rate = rateAt(seen)
      const burst = burstOf(seen)
      const then = levelAt(seen)
      let held = then.held
      let a = seen
      for (const spent of spends.slice(then.next)) {
        const before = refilled(held, a, spent.at, rate, burst).level
        // A reservation given back (a negative cost) fills the bucket up to its burst at most.
        held =
          spent.cost < 0
            ? Math.min(Math.max(burst, before), before - spent.cost)
            : before - spent.cost
        a = spent.at
      }
      held = refilled(held, a, now, rate, burst).level - refusing.reduce((sum, c) => sum + c, 0)
      return Math.ceil(Math.max(0, (Math.min(cost(task), burst) - held) / rate))
    },
    utilization(at) {
      advance(at)
      if (concurrency) return allowed > 0 ? served / allowed : 1
      // Allowed since the books opened: the bucket then, plus its refill = served + lost + left.
      const total = served + overflow + Math.max(0, level)
      return total > 0 ? Math.min(1, served / Math.max(total, startLevel)) : 1
    },
  }
}

/** A short, readable description of a draw, for the report. */
export function describeDraw(d: ProviderDraw): string {
  const values = d.phases.map((p) => p.value).join('>')
  const binding =
    d.binding === 'concurrency' ? `slots ${values}` : `${d.binding}/min ${values} (${d.burst})`
  const tenant = d.tenant ? ` tenant ${d.tenant.map((p) => p.value).join('>')}` : ''
  return (
    `#${d.seed} ${binding}, ${Math.round(d.durationMs / 1000)} s, ${d.refusal.status}` +
    `/${d.refusal.retry}, headers ${d.headers}${d.lag ? ' (late)' : ''}, ` +
    `${d.latency.kind} ${d.latency.medianMs} ms${tenant}` +
    (d.charge === 'used' ? '' : ` charge ${d.charge}`)
  )
}
