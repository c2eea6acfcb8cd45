import type { LimitCause } from '../../../shared/contract'
import type { ConcurrencyController, OutcomeContext } from './aimd'
import { mergeAimdParams, operatorPatch, startingLimit } from './aimd'
import type { AimdParams, LimitChange, Outcome } from '../core/types'
import { PACER_AIMD, SEED_AIMD } from '../core/types'
import type { ControllerState } from './store'
import { finiteOrNull, numberOr } from './controller-memory'
import { refusedFreesNoSlot } from './refused-slot'
import { LatencyDrop } from './latency-drop'
import { PROBE_REGROWTH, regrowthStep } from './probe-regrowth'
import { FirstWindowGrowth } from './first-window'
import { refusedLevel } from './probe-window'
import { ProbeInstant } from './probe-instant'
import { announcedCeiling, announcedNeed, liftedCeiling, LIFTED_MOST } from './announced-ceiling'
import type { AnnouncedRate } from './announced-ceiling'
import { probeWaitMs } from './probe-wait'
import { ServedLevel } from './served-cut'
import { CapEdge } from './cap-edge'
import { QuietStretch } from './quiet-stretch'
import { aboveWhatHeld } from './slow-start-edge'
import type { AdaptiveMemory, AdaptiveOptions } from './adaptive-types'

export type { AdaptiveMemory, AdaptiveOptions } from './adaptive-types'

/** Weight of a new round trip in the smoothed one (TCP: 1/8). */
const RTT_WEIGHT = 0.125

/**
 * Finds a provider's concurrency capacity from its answers alone (local servers, providers that
 * announce nothing). Params are the seed's AimdParams, read as:
 * - `increase`: growth per used success below the remembered ceiling (slow start grows by 1);
 * - `decrease`: the one multiplicative cut per congestion episode (a timeout cuts half as deep);
 * - `cooldownMs`: the longest base wait between probes above a refused level (the round trips
 *   decide it when they are shorter).
 *
 * Rules, each a lesson from TCP and adaptive concurrency limiters:
 * - One cut per episode (TCP NewReno): a throttle answering a call sent at or before the last cut
 *   says nothing new, so a burst of parallel 429s cuts once.
 * - Successes of calls sent before the cut do not grow the limit (fast recovery counts only the
 *   new window), and growth needs the limit in use: in-flight within one of it (counting the
 *   calls the partition's spread of the growth holds back, growth-spread.ts).
 * - Where throttles happened is remembered (the ceiling): the limit recovers quickly to just below
 *   it, holds until that level carried a full window, and probes the ceiling after a wait in
 *   round trips (probe-wait.ts), doubling per refused probe. A refused probe (429 or 503/529)
 *   returns to the level that held: the probe was the only call above it. A throttle at or below
 *   that level means the capacity dropped: it is cut and forgotten. A probe that carries a full
 *   window means the capacity rose: growth resumes (probe-regrowth.ts).
 * - The rest, one module each: refused-slot.ts, latency-drop.ts, probe-regrowth.ts, first-window.ts,
 *   probe-window.ts, probe-instant.ts, served-cut.ts, quiet-stretch.ts, cap-edge.ts,
 *   slow-start-edge.ts.
 * - 429 (own quota) and 503/529 (provider overloaded, cut the whole way) move the ceiling;
 *   timeouts (weak evidence) cut half as deep without teaching one; near_limit holds; other
 *   errors never move the limit.
 */
export class AdaptiveController implements ConcurrencyController {
  readonly partition: string
  readonly #maxProbeDoublings: number
  #params: AimdParams
  #limit: number
  #slowStart = true
  #held = 0
  #ceiling: number | null = null
  #refusedProbes = 0
  #nextProbeAt = Number.NEGATIVE_INFINITY
  #probing = false
  #lastCutAt = Number.NEGATIVE_INFINITY
  #cutRefusals = 0 // refusals of calls sent before the last cut, seen since it (probe-window.ts)
  #srtt: number | null = null // smoothed round trip of successful calls (TCP's SRTT)
  // Successes of calls sent since the admitted level last changed: a full window makes it `held`.
  #levelSince = Number.NEGATIVE_INFINITY
  #levelWins = 0
  #fastUntil = 0 // after a probe that carried a full window: slow start's growth up to this
  // Answers at the admitted level markedly faster than at first: the probe comes forward.
  readonly #latencyDrop = new LatencyDrop()
  // The first window after a cut, answered in one instant, grows the limit by one slot at most.
  readonly #firstWindow = new FirstWindowGrowth()
  // The most calls out when a call sent since the last cut was served: an overshoot's floor.
  readonly #served = new ServedLevel()
  readonly #quiet = new QuietStretch() // the served cut's: a refused probe does not end it
  readonly #capEdge = new CapEdge() // the last cut an overshoot's to what was served: no pause
  readonly #probeInstant = new ProbeInstant() // a second refusal of its instant: a fall
  // What an announced budget admits: the ceiling rises to what it needs in flight.
  #announced: AnnouncedRate | null = null
  #lifted = 0 // the ceiling windows carried at it lifted it to, with an announced budget (0: none)
  #heldBack = 0 // calls the growth's spread holds back (growth-spread.ts): the limit is in use

  /** A controller for one partition; params are merged over SEED_AIMD and validated. */
  constructor(partition: string, params: Partial<AimdParams> = {}, options: AdaptiveOptions = {}) {
    const { maxProbeDoublings = 1, limit } = options
    if (!Number.isInteger(maxProbeDoublings) || maxProbeDoublings < 0) {
      throw new TypeError(
        `Expected \`maxProbeDoublings\` to be an integer >= 0, got \`${String(maxProbeDoublings)}\``,
      )
    }
    this.partition = partition
    this.#maxProbeDoublings = maxProbeDoublings
    this.#params = mergeAimdParams(SEED_AIMD, params)
    this.#limit = startingLimit(this.#params, limit)
  }

  get params(): AimdParams {
    return { ...this.#params }
  }

  get limit(): number {
    return this.#limit
  }

  get concurrency(): number {
    return Math.max(this.#params.min, Math.floor(this.#limit))
  }

  get memory(): AdaptiveMemory {
    return {
      slowStart: this.#slowStart,
      held: this.#held,
      ceiling: this.#ceiling,
      refusedProbes: this.#refusedProbes,
      nextProbeAt: this.#nextProbeAt,
      probing: this.#probing,
      lastCutAt: this.#lastCutAt,
      srtt: this.#srtt,
      lifted: this.#lifted,
    }
  }

  /** A refusal of a call above a cap's edge the last cut answered (cap-edge.ts): no pause. */
  overshoot(sentAt: number): boolean {
    return this.#capEdge.explains(sentAt, this.#lastCutAt)
  }

  announcedRate(rate: AnnouncedRate | null): void {
    this.#announced = rate
  }
  heldBack(calls: number): void {
    this.#heldBack = calls
  }

  onOutcome(outcome: Outcome, ctx: OutcomeContext): LimitChange | null {
    switch (outcome) {
      case 'ok':
        return this.#onSuccess(ctx)
      case 'throttled':
      case 'overloaded':
      case 'timeout':
        return this.#onPushback(outcome, ctx)
      case 'near_limit':
      case 'error':
        return null
      default:
        throw new TypeError(`Unknown outcome \`${String(outcome)}\``)
    }
  }

  /**
   * Applies a patch at once, clamping the limit into [min, max]. A changed `initial` is the
   * operator's "start from here": the limit moves to it and what was learned is forgotten.
   */
  setParams(patch: Partial<AimdParams>, now: number): LimitChange | null {
    const next = operatorPatch(this.#params, patch, this.#limit)
    this.#params = next.params
    // A ceiling the operator lowered below the default holds (announced-ceiling.ts), lifted or not.
    if (next.initialChanged || next.params.max < PACER_AIMD.max) this.#lifted = 0
    if (next.initialChanged) {
      this.#slowStart = true
      this.#held = 0
      this.#ceiling = null
      this.#refusedProbes = 0
      this.#nextProbeAt = Number.NEGATIVE_INFINITY
      this.#probing = false
      this.#lastCutAt = now
      this.#quiet.cut(now, false)
    }
    return this.#set(next.limit, now, 'operator', 'operator')
  }

  #onSuccess({ now, sentAt, inflight }: OutcomeContext): LimitChange | null {
    const rtt = Math.max(1, now - sentAt)
    this.#srtt = this.#srtt === null ? rtt : this.#srtt + RTT_WEIGHT * (rtt - this.#srtt)
    // Sent before the cut: it answers the old window, not the new one.
    if (sentAt <= this.#lastCutAt) return null
    this.#served.served(now, inflight)
    const level = this.concurrency
    if (inflight + this.#heldBack < level - 1) return null
    if (sentAt >= this.#levelSince && ++this.#levelWins >= level) {
      this.#held = Math.max(this.#held, level)
      if (this.#probing && this.#ceiling !== null && level >= this.#ceiling) {
        // The probe carried a full window: the capacity rose, find how far.
        this.#probing = false
        this.#ceiling = null
        this.#refusedProbes = 0
        this.#fastUntil = PROBE_REGROWTH * level
      }
    }
    const max = announcedCeiling(this.#params.max, this.#announced, this.#srtt)
    const announced = this.#announced !== null && this.#params.max >= PACER_AIMD.max
    this.#lifted = liftedCeiling(this.#lifted, max, this.#held, announced && this.#ceiling === null)
    const p = { ...this.#params, max: announced ? Math.max(max, this.#lifted) : max }
    // The budget that lifted the limit past the operator's ceiling is no longer announced.
    if (!announced && this.#limit > p.max)
      return this.#set(p.max, now, 'no budget announced', 'operator')
    if (this.#ceiling === null) {
      const step = this.#slowStart ? 1 : regrowthStep(this.#limit, this.#fastUntil, p.increase)
      const reason = this.#slowStart ? `slow start +${step}` : `growth +${step}`
      const need = announcedNeed(this.#announced, this.#srtt)
      return this.#set(Math.min(p.max, Math.max(this.#limit + step, need)), now, reason, 'growth')
    }
    const target = Math.min(p.max, Math.max(p.min, this.#ceiling - 1))
    if (this.#limit < target) {
      const step = this.#firstWindow.allow(now, this.#lastCutAt, this.#srtt, p.increase)
      if (step === 0) return null
      return this.#set(Math.min(target, this.#limit + step), now, `recovery +${step}`, 'growth')
    }
    if (!this.#probing && sentAt >= this.#levelSince && this.#latencyDrop.observe(rtt)) {
      this.#nextProbeAt = Math.min(now, this.#nextProbeAt)
    }
    if (this.#probing || now < this.#nextProbeAt || this.#ceiling > p.max) return null
    // Probe from a level that carried a full window: a refused probe then goes back to it, where
    // a probe from a level not yet held would read as a capacity that dropped, and be cut.
    if (this.#held < this.concurrency) return null
    this.#probing = this.#probeInstant.probe(now)
    return this.#set(this.#ceiling, now, `probe ${this.#ceiling}`, 'probe')
  }

  #onPushback(
    outcome: 'throttled' | 'overloaded' | 'timeout',
    { now, sentAt, inflight }: OutcomeContext,
  ): LimitChange | null {
    const p = this.#params
    // TCP NewReno: one cut per window of calls. The rest of the burst still says where the
    // refusals began: each one that comes back finds one call fewer in flight.
    if (sentAt <= this.#lastCutAt) {
      if (outcome === 'throttled' && this.#ceiling !== null) {
        const n = this.#cutRefusals++
        const fell = this.#probeInstant.fell(sentAt, this.#lastCutAt) // probe-instant.ts
        const at = refusedLevel(this.#held, fell ? 0 : this.#refusedProbes, inflight, n, p.min)
        this.#ceiling = Math.min(this.#ceiling, at)
        // Refused at or below a level that held: not a refused probe but a capacity that fell.
        if (this.#ceiling <= this.#held) this.#forgetHeld()
      }
      if (outcome === 'timeout') return null
      const to = refusedFreesNoSlot(this.#limit, inflight, p.min)
      return this.#set(to, now, `refused, ${inflight - 1} still out`, 'throttle')
    }
    const level = this.concurrency
    // The limit can run ahead of what was really in flight (slow start): the refusal happened
    // where the calls were, not where the limit was.
    const refusedAt = Math.max(p.min, Math.min(level, inflight))
    const wasProbing = this.#probing
    // What was served counts calls in flight as the partition saw them: never above the ceiling.
    const served = Math.min(p.max, this.#served.cut(now, this.#quiet.since, this.#srtt))
    const aboveHeld = aboveWhatHeld(refusedAt, this.#held, p.min, this.#slowStart, served)
    this.#quiet.cut(now, wasProbing && aboveHeld && outcome !== 'timeout')
    this.#slowStart = false
    this.#probing = false
    this.#lastCutAt = now
    this.#cutRefusals = 0
    this.#fastUntil = 0
    this.#capEdge.cut(now, false)
    let to: number
    let reason: string
    let cause: LimitCause = 'throttle'
    if (outcome === 'timeout') {
      const factor = (1 + p.decrease) / 2
      to = this.#limit * factor
      reason = `timeout x${factor}`
    } else if (aboveHeld) {
      if (wasProbing) this.#refusedProbes += this.#probeInstant.refused(sentAt, now)
      this.#ceiling = refusedAt
      // An overloaded provider (503/529) is cut the whole way; a quota (429), or a refused probe
      // of either (the probe was the only call above what held), back to what held.
      to =
        outcome === 'overloaded' && !wasProbing
          ? this.#limit * p.decrease
          : Math.max(this.#held, this.#limit * p.decrease, wasProbing ? 0 : served)
      const edge = !wasProbing && to === served && served > this.#limit * p.decrease
      this.#capEdge.cut(now, edge)
      reason = wasProbing
        ? `probe refused, back to ${to}`
        : edge
          ? `throttle, back to ${to}: ${served + 1} out when served`
          : `${outcome === 'throttled' ? 'throttle' : outcome} x${p.decrease}`
      if (wasProbing) cause = 'probe'
    } else {
      // Refused at or below a level that held: the capacity dropped, what held no longer does,
      // and refused probes above the old level say nothing about the new one.
      this.#ceiling = refusedAt
      this.#held = 0
      this.#refusedProbes = 0
      to = this.#limit * p.decrease
      reason = `${outcome === 'throttled' ? 'throttle' : outcome} x${p.decrease}`
    }
    this.#nextProbeAt = now + this.#probeWaitMs()
    return this.#set(Math.max(p.min, to), now, reason, cause)
  }

  /** The capacity fell: what held no longer does, and refused probes above it say nothing. */
  #forgetHeld(): void {
    this.#held = 0
    this.#quiet.fell(this.#lastCutAt)
    if (this.#refusedProbes === 0) return
    this.#refusedProbes = 0
    this.#nextProbeAt = this.#lastCutAt + this.#probeWaitMs()
  }

  /** How long the limit holds below a refused level before it probes it again (probe-wait.ts). */
  #probeWaitMs(): number {
    const { cooldownMs } = this.#params
    const doublings = this.#maxProbeDoublings
    return probeWaitMs(cooldownMs, doublings, this.#refusedProbes, this.#ceiling, this.#srtt)
  }
  /** Everything it learned, so every worker of a shared partition runs as one controller. */
  exportState(): ControllerState {
    const served = this.#served.state
    return {
      limit: this.#limit,
      lastCutAt: finiteOrNull(this.#lastCutAt),
      memory: {
        kind: 'adaptive',
        slowStart: this.#slowStart,
        held: this.#held,
        ceiling: this.#ceiling,
        refusedProbes: this.#refusedProbes,
        nextProbeAt: finiteOrNull(this.#nextProbeAt),
        probing: this.#probing,
        levelSince: finiteOrNull(this.#levelSince),
        levelWins: this.#levelWins,
        cutRefusals: this.#cutRefusals,
        fastUntil: this.#fastUntil,
        srtt: this.#srtt,
        lifted: this.#lifted,
        servedMost: served.most,
        servedLastAt: finiteOrNull(served.lastAt),
        quietSince: finiteOrNull(this.#quiet.since),
      },
    }
  }

  importState(state: ControllerState): void {
    this.#limit = state.limit
    this.#lastCutAt = state.lastCutAt ?? Number.NEGATIVE_INFINITY
    const m = state.memory
    if (m?.kind !== 'adaptive') {
      // Another kind drives the partition: keep what this one learned, but a cut means congestion
      // was seen, and slow start is over.
      if (state.lastCutAt !== null) this.#slowStart = false
      return
    }
    this.#slowStart = m['slowStart'] === true
    this.#held = numberOr(m, 'held', 0)
    this.#ceiling = typeof m['ceiling'] === 'number' ? m['ceiling'] : null
    this.#refusedProbes = numberOr(m, 'refusedProbes', 0)
    this.#nextProbeAt = numberOr(m, 'nextProbeAt', Number.NEGATIVE_INFINITY)
    this.#probing = m['probing'] === true
    this.#levelSince = numberOr(m, 'levelSince', Number.NEGATIVE_INFINITY)
    this.#levelWins = numberOr(m, 'levelWins', 0)
    this.#cutRefusals = numberOr(m, 'cutRefusals', 0)
    this.#fastUntil = numberOr(m, 'fastUntil', 0)
    this.#lifted = Math.min(LIFTED_MOST, Math.max(0, numberOr(m, 'lifted', 0)))
    const servedAt = numberOr(m, 'servedLastAt', Number.NEGATIVE_INFINITY)
    this.#served.restore(numberOr(m, 'servedMost', 0), servedAt)
    this.#quiet.restore(numberOr(m, 'quietSince', this.#lastCutAt))
    const srtt = m['srtt']
    if (typeof srtt === 'number' && Number.isFinite(srtt) && srtt > 0) this.#srtt = srtt
  }

  #set(to: number, now: number, reason: string, cause: LimitCause): LimitChange | null {
    const from = this.#limit
    if (to === from) return null
    const before = this.concurrency
    this.#limit = to
    if (this.concurrency !== before) {
      this.#levelSince = now
      this.#levelWins = 0
      this.#latencyDrop.reset(this.concurrency, this.#ceiling)
    }
    return { partition: this.partition, ts: now, from, to, reason, cause }
  }
}
