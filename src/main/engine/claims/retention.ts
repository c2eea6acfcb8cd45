// How long the team's completed claims are reused, and whether a truncated answer counts: the
// Redis claim store's own values, or, once it follows one, another store's (the local one, which
// Settings change while running). And when the server may forget a claim for good.
import { checkMs } from './claims'
import type { StoredStatus } from '../core/types'

// A completed (or released) claim is removed by the server a minute after its retention: the
// epoch and the caller's clock decide reuse, the expiry only keeps memory bounded (and machines'
// clocks a little apart do not lose a result early).
const GC_SLACK_MS = 60_000

type Retention = { resultTtlMs: number; acceptTruncated: boolean }

/** A claim store's retention, its own or the one it follows. */
export class ClaimRetention {
  #own: Retention
  /** Where retention is read from instead, when it follows another store (the local one). */
  #follow: Retention | null = null

  constructor(resultTtlMs: number, acceptTruncated: boolean) {
    checkMs('resultTtlMs', resultTtlMs, 0)
    this.#own = { resultTtlMs, acceptTruncated }
  }

  follow(source: Retention): void {
    this.#follow = source
  }

  get resultTtlMs(): number {
    return (this.#follow ?? this.#own).resultTtlMs
  }

  set resultTtlMs(ms: number) {
    checkMs('resultTtlMs', ms, 0)
    ;(this.#follow ?? this.#own).resultTtlMs = ms
  }

  get acceptTruncated(): boolean {
    return (this.#follow ?? this.#own).acceptTruncated
  }

  set acceptTruncated(on: boolean) {
    ;(this.#follow ?? this.#own).acceptTruncated = on
  }

  /** acceptTruncated as a script's argument. */
  get accept(): string {
    return this.acceptTruncated ? '1' : '0'
  }

  /** How long after its completion the server keeps a claim (0: forever). */
  gcMs(): number {
    const ttl = this.resultTtlMs
    return ttl === 0 ? 0 : ttl + GC_SLACK_MS
  }

  retained(status: StoredStatus, completedAt: number, now: number): boolean {
    if (status === 'truncated' && !this.acceptTruncated) return false
    const ttl = this.resultTtlMs
    return ttl === 0 || now < completedAt + ttl
  }
}
