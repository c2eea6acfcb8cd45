// The pacing store's operations in Redis, each one Lua script: Redis runs a script alone, so the
// count of live slots and the take (or the free, or a record's compare-and-set on its version)
// are one atomic step, as one statement or IMMEDIATE transaction is in SQLite (store-sqlite.ts).
//
// Keys, under the store's prefix P: `P{partition}:rec` a hash (json: the record without its
// version, version, conc: its concurrency, paused: its pausedUntil, session: when the session
// began), `P{partition}:w` a hash of the partition's workers, each "slots waiting leaseUntil
// throttles successes errors" as integers (exact, unlike Lua's JSON numbers), and `P index` a
// sorted set of partitions by session start. Times are the callers' epoch ms, as in every store.
// The record hash's `budget` field is the shared announced budget (redis-budget.ts).
import { BUDGET_LUA } from './redis-budget'

const COMMON = `
local function parse(v)
  local s, w, l, t, o, e = string.match(v, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
  return { tonumber(s), tonumber(w), tonumber(l), tonumber(t), tonumber(o), tonumber(e) }
end
local function fmt(x)
  return string.format('%d %d %d %d %d %d', x[1], x[2], x[3], x[4], x[5], x[6])
end
local function zeros() return { 0, 0, 0, 0, 0, 0 } end
-- A worker's own slots always count for itself, even if its lease ran out unnoticed; the
-- others' only under a live lease.
local function count(wkey, worker, now)
  local all = redis.call('HGETALL', wkey)
  local inflight, othersWaiting, waitingWorkers, mine, me = 0, 0, 0, 0, nil
  for i = 1, #all, 2 do
    local x = parse(all[i + 1])
    if all[i] == worker then
      inflight = inflight + x[1]
      mine = x[1]
      me = x
    elseif x[3] >= now then
      inflight = inflight + x[1]
      othersWaiting = othersWaiting + x[2]
      if x[2] > 0 then waitingWorkers = waitingWorkers + 1 end
    end
  end
  return inflight, othersWaiting, waitingWorkers, mine, me
end
local function share(conc, waitingWorkers)
  if waitingWorkers == 0 then return math.huge end
  return math.ceil(conc / (waitingWorkers + 1))
end
`

/** One script: its source, sent once and then run by its SHA1 (EVALSHA). */
export interface PacingScript {
  readonly name: string
  readonly source: string
  readonly keys: number | 'variadic'
}

const script = (name: string, keys: number | 'variadic', body: string): PacingScript => ({
  name,
  keys,
  source: COMMON + (body.includes('bload(') ? BUDGET_LUA : '') + body,
})

/**
 * KEYS rec, w, index; ARGV worker, now, leaseMs, partition, init json, init conc.
 * A new session when no worker holds a live lease. → {created, version, json}
 */
export const JOIN = script(
  'join',
  3,
  `
local now, leaseMs = tonumber(ARGV[2]), tonumber(ARGV[3])
local v = redis.call('HGET', KEYS[1], 'version')
local live = false
if v then
  local all = redis.call('HVALS', KEYS[2])
  for i = 1, #all do
    if parse(all[i])[3] >= now then live = true break end
  end
end
if not live then
  local nv = (tonumber(v) or 0) + 1
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'json', ARGV[5], 'version', nv, 'conc', ARGV[6], 'paused', 0,
    'session', now)
  redis.call('ZADD', KEYS[3], now, ARGV[4])
  local me = zeros()
  me[3] = now + leaseMs
  redis.call('HSET', KEYS[2], ARGV[1], fmt(me))
  return { 1, nv, ARGV[5] }
end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
local me = raw and parse(raw) or zeros()
me[3] = now + leaseMs
redis.call('HSET', KEYS[2], ARGV[1], fmt(me))
return { 0, tonumber(v), redis.call('HGET', KEYS[1], 'json') }
`,
)

/**
 * KEYS rec, w; ARGV worker, now, leaseMs, waiting, known version, cost (JSON; '': none).
 * → {admitted (-1: no record), version, inflight, othersWaiting, json if not the known version,
 * ms until the budget allows the call (0: not what refused it), ticket seq, ticket spent (JSON)}
 */
export const ADMIT = script(
  'admit',
  2,
  `
local r = redis.call('HMGET', KEYS[1], 'version', 'conc', 'paused')
if not r[1] then return { -1 } end
local now = tonumber(ARGV[2])
local conc, paused = tonumber(r[2]), tonumber(r[3])
local inflight, ow, ww, mine, me = count(KEYS[2], ARGV[1], now)
local json = ''
if r[1] ~= ARGV[5] then json = redis.call('HGET', KEYS[1], 'json') end
if inflight >= conc or paused > now or mine >= share(conc, ww) then
  return { 0, tonumber(r[1]), inflight, ow, json }
end
local bud = nil
if ARGV[6] ~= '' then
  bud = bload(KEYS[1])
  local wait = bwait(bud, now, cjson.decode(ARGV[6]))
  if wait > 0 then return { 0, tonumber(r[1]), inflight, ow, json, wait } end
  if bcharge(bud, now, cjson.decode(ARGV[6])) then bsave(KEYS[1], bud) end
end
me = me or zeros()
me[1] = me[1] + 1
me[2] = tonumber(ARGV[4])
me[3] = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], fmt(me))
if bud then return { 1, tonumber(r[1]), inflight + 1, ow, json, 0, bud.s, cjson.encode(bud.c) } end
return { 1, tonumber(r[1]), inflight + 1, ow, json }
`,
)

/**
 * KEYS rec, w; ARGV worker, now, known version. What a decision is made on.
 * → {found (0: no record), version, inflight, json if not the known version}
 */
export const CHECK = script(
  'check',
  2,
  `
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return { 0 } end
local inflight = count(KEYS[2], ARGV[1], tonumber(ARGV[2]))
local json = ''
if v ~= ARGV[3] then json = redis.call('HGET', KEYS[1], 'json') end
return { 1, tonumber(v), inflight, json }
`,
)

/**
 * KEYS rec, w; ARGV worker, now, leaseMs, waiting, outcome (t s e or ''), expected version ('':
 * none), json ('': no change), conc, paused, handoff ('1'), known version, the call's budget
 * account (JSON; '': none), the handed-off call's cost (JSON; '': none).
 * → {1, version, inflight, handedOff, json if not known, changed, ticket seq, ticket spent (JSON)}
 * | {2 (moved), version} | {-1}
 */
export const RELEASE = script(
  'release',
  2,
  `
local r = redis.call('HMGET', KEYS[1], 'version', 'conc', 'paused')
if not r[1] then return { -1 } end
if ARGV[6] ~= '' and ARGV[6] ~= r[1] then return { 2, tonumber(r[1]) } end
local now = tonumber(ARGV[2])
local version, conc, paused = tonumber(r[1]), tonumber(r[2]), tonumber(r[3])
local inflight, ow, ww, mine, me = count(KEYS[2], ARGV[1], now)
local changed = 0
if ARGV[7] ~= '' then
  version = version + 1
  conc, paused = tonumber(ARGV[8]), tonumber(ARGV[9])
  redis.call('HSET', KEYS[1], 'json', ARGV[7], 'version', version, 'conc', conc, 'paused', paused)
  changed = 1
end
-- The handoff is admit's check on the counts after the free, in the same step.
local handed = 0
if ARGV[10] == '1' and inflight - 1 < conc and paused <= now and mine - 1 < share(conc, ww) then
  handed = 1
end
local bud, budChanged = nil, false
if ARGV[12] ~= '' then
  bud = bload(KEYS[1])
  budChanged = bsettle(bud, cjson.decode(ARGV[12]), now)
end
local ticket = false
if handed == 1 and ARGV[13] ~= '' then
  bud = bud or bload(KEYS[1])
  local cost = cjson.decode(ARGV[13])
  if bwait(bud, now, cost) > 0 then
    handed = 0
  else
    if bcharge(bud, now, cost) then budChanged = true end
    ticket = true
  end
end
if budChanged then bsave(KEYS[1], bud) end
me = me or zeros()
me[1] = math.max(0, me[1] - 1 + handed)
me[2] = math.max(0, tonumber(ARGV[4]) - handed)
me[3] = now + tonumber(ARGV[3])
if ARGV[5] == 't' then me[4] = me[4] + 1
elseif ARGV[5] == 's' then me[5] = me[5] + 1
elseif ARGV[5] == 'e' then me[6] = me[6] + 1 end
redis.call('HSET', KEYS[2], ARGV[1], fmt(me))
local json = ''
if changed == 0 and r[1] ~= ARGV[11] then json = redis.call('HGET', KEYS[1], 'json') end
if ticket then
  return { 1, version, math.max(0, inflight - 1 + handed), handed, json, changed, bud.s,
    cjson.encode(bud.c) }
end
return { 1, version, math.max(0, inflight - 1 + handed), handed, json, changed }
`,
)

/**
 * KEYS rec; ARGV expected version, json, conc, paused: a compare-and-set of the record.
 * → {1, version} | {2 (moved), version, json} | {-1}
 */
export const WRITE = script(
  'write',
  1,
  `
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return { -1 } end
if v ~= ARGV[1] then return { 2, tonumber(v), redis.call('HGET', KEYS[1], 'json') } end
local nv = tonumber(v) + 1
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'version', nv, 'conc', ARGV[3], 'paused', ARGV[4])
return { 1, nv }
`,
)

/**
 * KEYS rec1, w1, rec2, w2, ...; ARGV worker, now, leaseMs, slots1, waiting1, slots2, ...
 * Sets the worker's slots and waiting where the partition has a record. → indexes without one
 */
export const HEARTBEAT = script(
  'heartbeat',
  'variadic',
  `
local now, leaseMs = tonumber(ARGV[2]), tonumber(ARGV[3])
local missing = {}
for i = 1, #KEYS / 2 do
  if redis.call('EXISTS', KEYS[2 * i - 1]) == 1 then
    local raw = redis.call('HGET', KEYS[2 * i], ARGV[1])
    local me = raw and parse(raw) or zeros()
    me[1] = tonumber(ARGV[2 + 2 * i])
    me[2] = tonumber(ARGV[3 + 2 * i])
    me[3] = now + leaseMs
    redis.call('HSET', KEYS[2 * i], ARGV[1], fmt(me))
  else
    missing[#missing + 1] = i - 1
  end
end
return missing
`,
)

/**
 * KEYS index; ARGV now, since, key prefix. Every partition whose latest lease ends at or after
 * `since`, oldest session first (it reads keys named from the index: one Redis, not a cluster).
 * → flat {partition, version, json, inflight, waiting, throttles, successes, errors, workers,
 * activeUntil} per partition
 */
export const VIEWS = script(
  'views',
  1,
  `
local now, since = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for _, p in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local rec = redis.call('HMGET', ARGV[3] .. p .. ':rec', 'version', 'json')
  if rec[1] then
    local inflight, waiting, t, s, e, workers, active = 0, 0, 0, 0, 0, 0, 0
    for _, raw in ipairs(redis.call('HVALS', ARGV[3] .. p .. ':w')) do
      local x = parse(raw)
      if x[3] >= now then
        inflight = inflight + x[1]
        waiting = waiting + x[2]
        workers = workers + 1
      end
      t, s, e = t + x[4], s + x[5], e + x[6]
      if x[3] > active then active = x[3] end
    end
    if active >= since then
      for _, f in ipairs({ p, tonumber(rec[1]), rec[2], inflight, waiting, t, s, e, workers,
        active }) do
        out[#out + 1] = f
      end
    end
  end
end
return out
`,
)

export const SCRIPTS = [JOIN, ADMIT, CHECK, RELEASE, WRITE, HEARTBEAT, VIEWS] as const
