-- Takes a slot when the partition's concurrency, its pause, the worker's fair share and the
-- shared budget all allow it. Uses common.lua and budget.lua.
--
-- KEYS[1] rec
-- KEYS[2] w
-- ARGV[1] worker
-- ARGV[2] now
-- ARGV[3] leaseMs
-- ARGV[4] waiting
-- ARGV[5] known version
-- ARGV[6] cost (JSON; '': none)
--
-- Returns {admitted (-1: no record), version, inflight, othersWaiting, json if not the known
-- version, ms until the budget allows the call (0: not what refused it), ticket seq, ticket
-- spent (JSON)}.

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
