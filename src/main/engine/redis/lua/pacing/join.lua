-- A worker joins a partition: a new session when no worker holds a live lease. Uses common.lua.
--
-- KEYS[1] rec         P pacing:{partition}:rec
-- KEYS[2] w           P pacing:{partition}:w
-- KEYS[3] index       P pacing:index
-- ARGV[1] worker
-- ARGV[2] now
-- ARGV[3] leaseMs
-- ARGV[4] partition
-- ARGV[5] init json
-- ARGV[6] init conc
--
-- Returns {created, version, json}.

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
