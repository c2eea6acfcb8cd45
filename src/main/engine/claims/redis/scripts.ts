// The claim store's operations in Redis, each one Lua script: Redis runs a script alone, so the
// read of a claim and its compare-and-set on the epoch are one atomic step, as one statement is
// in SQLite (claims-sql.ts).
//
// Keys, under the store's prefix P: `P claim:{fp}` a hash (state running|completed|released,
// owner, epoch, lease: lease_until, and once completed status, result, cost ('' = null), at:
// completed_at); `P claims:gen` the marker of the data's generation (a server restarted without
// persistence has none: the machines re-seed it, claims-reseed.ts); `P claims:grace` the time
// until which nobody claims after a re-seed began; `P claims:reseeding` a sorted set of the
// machines re-seeding now, by deadline. Completions, releases and forgotten failures are
// published on `P claims:done` with the fingerprint as the message. Times are the callers' epoch
// ms, as in the pacing store; numbers that are stored come as ARGV text, never through Lua's
// doubles.

import type { ClaimAttempt, StoredResult, StoredStatus } from '../../core/types'
import { lua, type LuaScript } from '../../redis/lua'

/** A script's reply: its words and integers. */
export type Reply = (string | number)[]

// Each script's KEYS, ARGV and reply are in its file's header (redis/lua/claims/).
export const CLAIM = lua('claimsClaim', 'claims/claim', 'claims/retained')
export const WAIT_STEP = lua('claimsWaitStep', 'claims/wait-step', 'claims/retained')
export const TAKE_OVER = lua('claimsTakeOver', 'claims/take-over')
export const RENEW = lua('claimsRenew', 'claims/renew')
export const COMPLETE = lua('claimsComplete', 'claims/complete')
export const RELEASE = lua('claimsRelease', 'claims/release')
export const FORGET_FAILURE = lua('claimsForgetFailure', 'claims/forget-failure')
export const GET_RESULT = lua('claimsGetResult', 'claims/get-result', 'claims/retained')
export const BEGIN_RESEED = lua('claimsBeginReseed', 'claims/begin-reseed')
export const SEED = lua('claimsSeed', 'claims/seed')

/** The claim store's scripts, for the client that runs them (team/scripts.ts). */
export const CLAIM_SCRIPTS: readonly LuaScript[] = [
  CLAIM,
  WAIT_STEP,
  TAKE_OVER,
  RENEW,
  COMPLETE,
  RELEASE,
  FORGET_FAILURE,
  GET_RESULT,
  BEGIN_RESEED,
  SEED,
]

/** CLAIM's (and WAIT_STEP's 'took' and 'completed') reply as a ClaimAttempt. */
export function parseAttempt(fp: string, r: Reply): ClaimAttempt {
  switch (r[0]) {
    case 'owned':
      return { kind: 'owned', epoch: Number(r[1]), tookOver: false }
    case 'took':
      return {
        kind: 'owned',
        epoch: Number(r[1]),
        tookOver: true,
        previousOwner: String(r[2]),
        previousEpoch: Number(r[3]),
      }
    case 'busy':
      return { kind: 'busy', owner: String(r[1]), epoch: Number(r[2]), leaseUntil: Number(r[3]) }
    case 'completed':
      return { kind: 'completed', result: toStoredResult(r) }
    default:
      throw new Error(`claim of ${fp}: unexpected reply ${JSON.stringify(r)}`)
  }
}

/** A 'completed' reply's result. */
export function toStoredResult(r: Reply): StoredResult {
  const cost = String(r[5])
  return {
    result: String(r[4]),
    status: String(r[3]) as StoredStatus,
    owner: String(r[1]),
    epoch: Number(r[2]),
    completedAt: Number(r[6]),
    costMicros: cost === '' ? null : Number(cost),
  }
}
