-- Claims a task for a machine. Uses retained.lua.
--
-- KEYS[1] claim       P claim:{fp}
-- KEYS[2] gen         P claims:gen, the marker of the data's generation
-- KEYS[3] grace       P claims:grace, nobody claims before it
-- KEYS[4] reseeding   P claims:reseeding, machines re-seeding, by deadline
-- ARGV[1] owner
-- ARGV[2] now
-- ARGV[3] leaseUntil
-- ARGV[4] ttl: retention of a completed result in ms (0: forever)
-- ARGV[5] accept: '1' hands out truncated results
-- ARGV[6] knownGen: the marker this machine knows
--
-- Returns {'lost'} (the marker is not the one this machine knows: re-seed first),
-- {'hold', ms} (re-seeding under way), {'owned', epoch}, {'took', epoch, previousOwner,
-- previousEpoch}, {'busy', owner, epoch, leaseUntil} or
-- {'completed', owner, epoch, status, result, cost, at}.

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
