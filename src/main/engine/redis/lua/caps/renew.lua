-- Renews an owner's lease while it holds reservations. Uses common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] owner
-- ARGV[3] now (epoch ms)
-- ARGV[4] leaseMs
--
-- Returns 1 when renewed, 0 when it holds none (or was taken for dead: its holds are gone).

if redis.call('EXISTS', resKey(ARGV[2])) == 0 then return 0 end
redis.call('ZADD', OWNERS, tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[2])
return 1
