// A rate nobody announces whose bucket holds a single call refuses a call sent in the same instant
// as another, and accepts as many in flight when the calls go apart; a cap refuses the call above
// it however the calls are spaced. Held at one call (a probe of two goes in the instant its slot's
// refill goes, and is refused), the concurrency controller read such a rate as a cap of one: one
// call per round trip where the rate allowed many (#100049, 2.9-s answers, 0.077 used; #200009,
// #200028, #600070). A refill named to the millisecond tells such a bucket at once
// (refill-pace.ts); without one, only spacing can, in three steps:
// - a refusal of a call sent in the same instant as the send before it, with one call out, arms a
//   test: the next call with one out waits until a quarter of a round trip after the send before
//   it (in practice the controller's next probe of two, sent apart);
// - served apart, the calls are held until none is out and the next two go in one instant: a cap
//   that rose carries them, a single-call bucket refuses the second (one probe alone misread every
//   cap that rose from one to two slots as a rate);
// - refused together after carrying apart: the sends are paced at the test's spacing by a refill
//   pace (its probes at half the gap, every 16 successes, and its growth between them find the
//   rate; its refusals are the pace's, not the controller's).
// A test refused, or a pair carried, was a cap: the next 3 close refusals arm nothing, twice as
// many after each. Only a worker alone on the partition tests (a store of its own, or one that
// counts the workers and says one: partition-pacing.ts): with others sending, the calls out it
// counts are not all the calls out, and a cap that rose read as a rate (#100021 with three
// processes, 0.932 -> 0.160 used). On `diag.ts --seed 0..19` (1,200 draws; docs/pacing.md): the
// rates gain (#200009 0.188 -> 0.724, #600070 0.259 -> 0.842, #100049 0.077 -> 0.348), pooled
// mean utilization 0.8483 -> 0.8529, the throttled percentiles unchanged; the tests move the
// probes of caps and floor paces by a fraction of a round trip, and some lose their timing.
// Pure: every method takes `now`.
import type { Outcome } from '../core/types'
import { RefillPace } from './refill-pace'
import type { RoundTrips } from './window-spread'

/** A send within this share of a round trip of the one before went in the same instant. */
const CLOSE_RTT_SHARE = 0.02
/** The test goes this share of a round trip after the send before it. */
const TEST_RTT_SHARE = 0.25
/** Only a refusal with at most this many calls out arms a test. */
const MAX_OUT = 1
/** Round trips after a test carried within which its burst must go. */
const CONFIRM_RTTS = 10
/** Successes between the spaced pace's probes at half its gap, at first. */
const SPACED_PROBE_EVERY = 16
/** Close refusals let go after the first test that told a cap... */
const LET_GO_FIRST = 3
/** ... doubling per such test up to this many (a cap tested every few minutes at most). */
const LET_GO_MOST = 192
/** Sends kept, with the calls out at each. */
const SENDS_KEPT = 64

export class SpacedRate {
  // The pace a refill named to the millisecond sets, as before this rule.
  readonly #named: RefillPace
  // The pace a spaced test that carried sets.
  readonly #spaced: RefillPace

  readonly #trips: RoundTrips

  /** `trips`: the partition's round trips, settled before this pace hears the answer. */
  constructor(trips: RoundTrips) {
    this.#trips = trips
    this.#named = new RefillPace(trips)
    this.#spaced = new RefillPace(trips, SPACED_PROBE_EVERY, true)
  }
  // Recent sends, and our calls out before each went. Calls out are the partition's round trips'
  // count (`trips.inflight`): it hears a send after this does and an answer before.
  #sends: { at: number; out: number }[] = []
  // Calls out at a close send refused: the next call with as many out goes apart.
  #armed: number | null = null
  #test: { at: number; gap: number } | null = null
  // A test that carried: the calls are held until none is out, then two go in one instant. A cap
  // that rose carries them; a rate refuses the second. `at`: the second's send.
  #confirm: { gap: number; until: number; at: number | null; carried: number } | null = null
  // Close refusals to let go before the next test, and how many after the next refused test.
  #skip = 0
  #skipNext = LET_GO_FIRST
  // No other worker sends on the partition: a store of its own (until `counted` says otherwise).
  #alone = true

  /** A cap, told by a test: the next close refusals arm nothing, twice as many each time. */
  #letGo(): void {
    this.#skip = this.#skipNext
    this.#skipNext = Math.min(LET_GO_MOST, this.#skipNext * 2)
  }

  get callsPerMs(): number | null {
    return this.#named.callsPerMs ?? this.#spaced.callsPerMs
  }

  #paced(): boolean {
    return this.#named.callsPerMs !== null || this.#spaced.callsPerMs !== null
  }

  /** Ms until the next call may go; 0 when nothing holds it. */
  delayMs(now: number): number {
    // A refill named to the ms, once it holds, paces alone (the spaced pace's gap was a guess).
    const named = this.#named.callsPerMs !== null
    const paced = named ? this.#named.delayMs(now) : this.#spaced.delayMs(now)
    // A pair that did not go within its round trips is void: no call waits on it any longer.
    if (this.#confirm && now > this.#confirm.until) this.#confirm = null
    const confirm = this.#confirm
    const last = this.#sends[this.#sends.length - 1]
    // Held until none is out; then the burst's second call goes in the first's instant.
    const burst = this.#trips.inflight === 1 && last?.at === now
    // Two calls, no third in their instant: the answer must say which one was refused.
    if (confirm?.at === now) return Math.max(paced, 1)
    if (confirm?.at === null && this.#trips.inflight > 0 && !burst && this.#trips.srtt !== null) {
      const hold = Math.min(this.#trips.srtt / 4, confirm.until - now)
      return Math.max(paced, Math.ceil(hold))
    }
    if (this.#armed === null || this.#test || this.#paced() || !last || this.#trips.srtt === null) {
      return paced
    }
    if (this.#trips.inflight < this.#armed) return paced
    return Math.max(paced, Math.ceil(last.at + this.#trips.srtt * TEST_RTT_SHARE - now))
  }

  admitted(now: number): void {
    this.#named.admitted(now)
    this.#spaced.admitted(now)
    const last = this.#sends[this.#sends.length - 1]
    const out = this.#trips.inflight
    if (
      this.#armed !== null &&
      !this.#test &&
      !this.#paced() &&
      last &&
      this.#trips.srtt !== null
    ) {
      const gap = now - last.at
      if (out >= this.#armed && gap >= this.#trips.srtt * TEST_RTT_SHARE * 0.9) {
        this.#test = { at: now, gap }
      }
    }
    if (this.#confirm?.at === null && out === 1 && last?.at === now) this.#confirm.at = now
    this.#sends.push({ at: now, out })
    if (this.#sends.length > SENDS_KEPT) this.#sends.shift()
  }

  /** Every finished call, whatever its outcome. */
  settled(now: number, sentAt: number, outcome: Outcome): void {
    const ok = outcome === 'ok' || outcome === 'near_limit'
    const test = this.#test?.at === sentAt ? this.#test : null
    if (test) this.#test = null
    if (this.#confirm && now > this.#confirm.until) this.#confirm = null
    // Both calls of the pair carried (either may answer first): a cap that rose.
    if (ok && this.#confirm?.at === sentAt && ++this.#confirm.carried === 2) {
      this.#confirm = null
      this.#letGo()
    }
    if (!ok) {
      if (test && (outcome === 'throttled' || outcome === 'overloaded')) {
        // Refused apart as well: a cap.
        this.#armed = null
        this.#letGo()
      }
      return
    }
    this.#named.succeeded(now, sentAt)
    this.#spaced.succeeded(now, sentAt)
    if (test && !this.#paced()) {
      this.#armed = null
      this.#confirm = {
        gap: test.gap,
        until: now + (this.#trips.srtt ?? 0) * CONFIRM_RTTS,
        at: null,
        carried: 0,
      }
    }
  }

  /**
   * The workers on the partition as its store counts them (undefined: a shared store that does
   * not, team mode's Redis). Tests go only while this worker is alone: its calls out are then all
   * the calls out.
   */
  counted(workers: number | undefined): void {
    this.#alone = workers === 1
  }

  /** A refusal (no budget announced): true if a pace answers it, not the controller. */
  refused(now: number, sentAt: number, headers: Record<string, string> | undefined): boolean {
    if (this.#named.refused(now, sentAt, headers)) return true
    if (this.#named.callsPerMs !== null) return false
    if (this.#spaced.cut(now, sentAt)) return true
    // The later of sends in one instant: a bucket serves them in order.
    const at = this.#sends.findLastIndex((s) => s.at === sentAt)
    const send = this.#sends[at]
    const prev = this.#sends[at - 1]
    if (!send || !prev || this.#trips.srtt === null || this.#test) return false
    const confirm = this.#confirm
    if (confirm?.at === sentAt) {
      // Refused together where the same calls went through apart: a rate.
      this.#confirm = null
      this.#spaced.start(now, confirm.gap)
      return true
    }
    if (confirm) return false
    if (sentAt - prev.at > this.#trips.srtt * CLOSE_RTT_SHARE) return false
    if (send.out < 1 || send.out > MAX_OUT) return false
    if (!this.#alone) return false
    if (this.#skip > 0) this.#skip--
    else this.#armed = send.out
    return false
  }
}
