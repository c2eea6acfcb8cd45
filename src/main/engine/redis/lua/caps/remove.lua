-- Removes a team cap; reservations that held it give their holds back as they settle. Uses
-- common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] cap id
--
-- Returns 1, or 0 when there was none.

if redis.call('HDEL', CAPS, ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', META, 'ver', 1)
return 1
