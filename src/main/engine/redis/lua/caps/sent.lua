-- Marks a reservation sent, before its request goes out: if its owner dies before the answer is
-- settled, its worst case stays counted (in doubt) instead of coming back. Uses common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] owner
-- ARGV[3] reservation id
-- ARGV[4] now (epoch ms)
-- ARGV[5] leaseMs
--
-- Returns 1, or 0 when the reservation is gone (the owner's lease ran out: it must not send).

local v = redis.call('HGET', resKey(ARGV[2]), ARGV[3])
if not v then return 0 end
if string.sub(v, 1, 1) == '0' then
  redis.call('HSET', resKey(ARGV[2]), ARGV[3], '1' .. string.sub(v, 2))
end
redis.call('ZADD', OWNERS, tonumber(ARGV[4]) + tonumber(ARGV[5]), ARGV[2])
return 1
