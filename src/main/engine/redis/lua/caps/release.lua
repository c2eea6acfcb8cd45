-- Gives a reservation back whole: nothing was sent. Uses common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] owner
-- ARGV[3] reservation id
--
-- Returns 1, or 0 when it was gone already.

local v = redis.call('HGET', resKey(ARGV[2]), ARGV[3])
if not v then return 0 end
local _, micros, holds = parseRes(v)
unhold(holds, micros)
redis.call('HDEL', resKey(ARGV[2]), ARGV[3])
return 1
