// What the claim store suite (claims-suite.ts) and its parts share: the options a store is made
// with, a claim as its backend keeps it, the handles a backend opens, and the fingerprint and
// lease the tests claim.
import { fingerprint } from '../../../../src/main/engine/core/fingerprint'
import type { AsyncClaimStore, Clock } from '../../../../src/main/engine/core/types'
import type { FakeClock } from '../../../helpers/clock'

export interface ClaimStoreOptions {
  clock: Clock
  resultTtlMs?: number
  pollMinMs?: number
  pollMaxMs?: number
  acceptTruncated?: boolean
}

export interface ClaimRow {
  state: string
  status: string | null
  owner: string
  epoch: number
  lease_until: number
  result: string | null
}

/** One shared state; stores on its first connection, or on a second one (another process). */
export interface ClaimHandles {
  store(opts: ClaimStoreOptions): AsyncClaimStore
  elsewhere(opts: ClaimStoreOptions): AsyncClaimStore
  row(fp: string): Promise<ClaimRow | undefined>
  /** Claims kept, one per fingerprint ever claimed. */
  count(): Promise<number>
  close(): void | Promise<void>
}

export const LEASE = 10_000
export const FP = fingerprint('summarize', { text: 'hello' })

/** What a part of the suite reads of the suite running it; the first store() of a test makes them. */
export interface SuiteParts {
  store(opts?: Omit<ClaimStoreOptions, 'clock'>): Promise<AsyncClaimStore>
  row(fp?: string): Promise<ClaimRow | undefined>
  handles(): ClaimHandles
  clock(): FakeClock
}
