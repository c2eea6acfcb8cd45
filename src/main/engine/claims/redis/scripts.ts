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

/** A script's reply: its words and integers. */
export type Reply = (string | number)[]

export interface ClaimScript {
  readonly name: string
  readonly source: string
}

// Whether a completed claim's result is handed out: within retention, not truncated unless the
// operator accepts truncated answers. ARGV ttl, accept are passed by each script that reads.
const RETAINED = `
local function retained(h, now, ttl, accept)
  if h[5] == 'truncated' and accept ~= '1' then return false end
  return ttl == 0 or now < tonumber(h[8]) + ttl
end
local function completed(h)
  return {'completed', h[2], tonumber(h[3]), h[5], h[6] or '', h[7] or '', tonumber(h[8])}
end
local FIELDS = {'state', 'owner', 'epoch', 'lease', 'status', 'result', 'cost', 'at'}
`

// KEYS claim, gen, grace, reseeding. ARGV owner, now, leaseUntil, ttl, accept, knownGen.
// -> {'lost'} (the marker is not the one this machine knows: re-seed first), {'hold', ms}
// (re-seeding under way), {'owned', epoch}, {'took', epoch, previousOwner, previousEpoch},
// {'busy', owner, epoch, leaseUntil}, {'completed', owner, epoch, status, result, cost, at}.
export const CLAIM: ClaimScript = {
  name: 'claim',
  source: `${RETAINED}
local gen = redis.call('GET', KEYS[2])
if not gen or gen ~= ARGV[6] then return {'lost'} end
local now = tonumber(ARGV[2])
local grace = tonumber(redis.call('GET', KEYS[3]) or '0')
if grace > now then return {'hold', grace - now} end
if redis.call('ZCOUNT', KEYS[4], now, '+inf') > 0 then return {'hold', 50} end
local h = redis.call('HMGET', KEYS[1], unpack(FIELDS))
if not h[1] then
  redis.call('HSET', KEYS[1], 'state', 'running', 'owner', ARGV[1], 'epoch', '1', 'lease', ARGV[3])
  return {'owned', 1}
end
local epoch = tonumber(h[3])
if h[1] == 'completed' and retained(h, now, tonumber(ARGV[4]), ARGV[5]) then return completed(h) end
if h[1] == 'completed' or h[1] == 'released' then
  redis.call('HDEL', KEYS[1], 'status', 'result', 'cost', 'at')
  redis.call('HSET', KEYS[1], 'state', 'running', 'owner', ARGV[1], 'epoch', epoch + 1,
    'lease', ARGV[3])
  redis.call('PERSIST', KEYS[1])
  return {'owned', epoch + 1}
end
if tonumber(h[4]) >= now then return {'busy', h[2], epoch, tonumber(h[4])} end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', epoch + 1, 'lease', ARGV[3])
return {'took', epoch + 1, h[2], epoch}
`,
}

// A waiter's look at the claim. KEYS claim. ARGV owner, now, leaseUntil, ttl, accept.
// -> {'released'}, {'pending', leaseUntil}, {'took', ...} or {'completed', ...} as CLAIM.
export const WAIT_STEP: ClaimScript = {
  name: 'wait-step',
  source: `${RETAINED}
local now = tonumber(ARGV[2])
local h = redis.call('HMGET', KEYS[1], unpack(FIELDS))
if not h[1] or h[1] == 'released' then return {'released'} end
if h[1] == 'completed' then
  if retained(h, now, tonumber(ARGV[4]), ARGV[5]) then return completed(h) end
  return {'released'}
end
if tonumber(h[4]) >= now then return {'pending', tonumber(h[4])} end
local epoch = tonumber(h[3])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', epoch + 1, 'lease', ARGV[3])
return {'took', epoch + 1, h[2], epoch}
`,
}

// KEYS claim. ARGV owner, expectedEpoch, now, leaseUntil. -> 1 taken over, 0 not.
export const TAKE_OVER: ClaimScript = {
  name: 'take-over',
  source: `
local h = redis.call('HMGET', KEYS[1], 'state', 'epoch', 'lease')
if h[1] ~= 'running' or h[2] ~= ARGV[2] or tonumber(h[3]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', tonumber(h[2]) + 1, 'lease', ARGV[4])
return 1
`,
}

// Renews many claims in one round. KEYS the claims. ARGV leaseUntil, then per claim epoch,
// owner ('' = any), held ('1': this machine holds it; a claim the server lost is written again,
// re-seeding a running claim). -> one 1 or 0 per claim.
export const RENEW: ClaimScript = {
  name: 'renew',
  source: `
local out = {}
for i, key in ipairs(KEYS) do
  local epoch, owner, held = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
  local h = redis.call('HMGET', key, 'state', 'epoch', 'owner')
  if not h[1] and held == '1' then
    redis.call('HSET', key, 'state', 'running', 'owner', owner, 'epoch', epoch, 'lease', ARGV[1])
    out[i] = 1
  elseif h[1] == 'running' and h[2] == epoch and (owner == '' or h[3] == owner) then
    redis.call('HSET', key, 'lease', ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
`,
}

// Fenced completion. KEYS claim, channel, gen. ARGV epoch, owner ('' = any), result, status,
// cost, at, gcMs ('0' = never expires), fp, again ('1': a retry after a reply lost on the way;
// the same epoch and owner completed already is then this completion), knownGen. -> 1
// completed, 0 fenced, -1 the data is not the one this machine knows (re-seed, then again: a
// completion held through a restart must find its claim written back, not missing).
export const COMPLETE: ClaimScript = {
  name: 'complete',
  source: `
if redis.call('GET', KEYS[3]) ~= ARGV[10] then return -1 end
local h = redis.call('HMGET', KEYS[1], 'state', 'epoch', 'owner')
local mine = h[2] == ARGV[1] and (ARGV[2] == '' or h[3] == ARGV[2])
if ARGV[9] == '1' and h[1] == 'completed' and mine then return 1 end
if h[1] ~= 'running' or not mine then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'status', ARGV[4], 'result', ARGV[3],
  'cost', ARGV[5], 'at', ARGV[6])
if ARGV[7] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[7]) end
redis.call('PUBLISH', KEYS[2], ARGV[8])
return 1
`,
}

// KEYS claim, channel. ARGV epoch, owner ('' = any), now, gcMs, fp. -> 1 released, 0 not.
export const RELEASE: ClaimScript = {
  name: 'release',
  source: `
local h = redis.call('HMGET', KEYS[1], 'state', 'epoch', 'owner')
if h[1] ~= 'running' or h[2] ~= ARGV[1] or (ARGV[2] ~= '' and h[3] ~= ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'state', 'released', 'lease', ARGV[3])
if ARGV[4] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
redis.call('PUBLISH', KEYS[2], ARGV[5])
return 1
`,
}

// KEYS claim, channel. ARGV fp. -> 1 forgotten, 0 no cached failure.
export const FORGET_FAILURE: ClaimScript = {
  name: 'forget-failure',
  source: `
local h = redis.call('HMGET', KEYS[1], 'state', 'status')
if h[1] ~= 'completed' or h[2] ~= 'failed' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'released')
redis.call('HDEL', KEYS[1], 'result')
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
`,
}

// KEYS claim. ARGV now, ttl, accept. -> {'completed', ...} as CLAIM, or {'none'}.
export const GET_RESULT: ClaimScript = {
  name: 'get-result',
  source: `${RETAINED}
local h = redis.call('HMGET', KEYS[1], unpack(FIELDS))
if h[1] == 'completed' and retained(h, tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]) then
  return completed(h)
end
return {'none'}
`,
}

// A re-seed begins. KEYS gen, grace, reseeding. ARGV newGen, worker, deadline, graceUntil,
// graceMs, knownGen. A missing marker is written (with the grace in which nobody claims, so
// every machine connected has the time to notice and join); the machine is among the
// re-seeding ones until it ends or its deadline passes. -> {gen, created (1/0)}.
export const BEGIN_RESEED: ClaimScript = {
  name: 'begin-reseed',
  source: `
local gen = redis.call('GET', KEYS[1])
local created = 0
if not gen then
  gen = ARGV[1]
  created = 1
  redis.call('SET', KEYS[1], gen)
  if tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5]) end
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
return {gen, created}
`,
}

// Claims written only where the server has none. KEYS the claims. ARGV per claim 8 values:
// state, owner, epoch, lease, status, result, cost, at; then gcMs ('0' = never). -> how many
// were written.
export const SEED: ClaimScript = {
  name: 'seed',
  source: `
local n = 0
local gc = ARGV[#ARGV]
for i, key in ipairs(KEYS) do
  local b = 8 * (i - 1)
  if redis.call('EXISTS', key) == 0 then
    if ARGV[b + 1] == 'completed' then
      redis.call('HSET', key, 'state', 'completed', 'owner', ARGV[b + 2], 'epoch', ARGV[b + 3],
        'lease', ARGV[b + 4], 'status', ARGV[b + 5], 'result', ARGV[b + 6], 'cost', ARGV[b + 7],
        'at', ARGV[b + 8])
      if gc ~= '0' then redis.call('PEXPIRE', key, gc) end
    else
      redis.call('HSET', key, 'state', 'running', 'owner', ARGV[b + 2], 'epoch', ARGV[b + 3],
        'lease', ARGV[b + 4])
    end
    n = n + 1
  end
end
return n
`,
}

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
