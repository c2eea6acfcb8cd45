-- Frees a slot, with the call's outcome, maybe a new record (compare-and-set on its version)
-- and maybe a handoff of the slot to this worker's next call. Uses common.lua and budget.lua.
--
-- KEYS[1] rec
-- KEYS[2] w
-- ARGV[1] worker
-- ARGV[2] now
-- ARGV[3] leaseMs
-- ARGV[4] waiting
-- ARGV[5] outcome: t, s, e or ''
-- ARGV[6] expected version ('': none)
-- ARGV[7] json ('': no change)
-- ARGV[8] conc
-- ARGV[9] paused
-- ARGV[10] handoff ('1')
-- ARGV[11] known version
-- ARGV[12] the call's budget account (JSON; '': none)
-- ARGV[13] the handed-off call's cost (JSON; '': none)
--
-- Returns {1, version, inflight, handedOff, json if not known, changed, ticket seq, ticket
-- spent (JSON)}, {2 (moved), version} or {-1}.

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
