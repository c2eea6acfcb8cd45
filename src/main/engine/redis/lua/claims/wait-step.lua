-- A waiter's look at the claim: taken over when its lease ran out. Uses retained.lua.
--
-- KEYS[1] claim
-- ARGV[1] owner
-- ARGV[2] now
-- ARGV[3] leaseUntil
-- ARGV[4] ttl
-- ARGV[5] accept
--
-- Returns {'released'}, {'pending', leaseUntil}, or {'took', ...} or {'completed', ...} as
-- claim.lua.

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
