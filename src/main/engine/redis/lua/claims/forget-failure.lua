-- Forgets a cached failure, so the task runs again.
--
-- KEYS[1] claim
-- KEYS[2] channel
-- ARGV[1] fp, published on the channel
--
-- Returns 1 forgotten, 0 no cached failure.

local h = redis.call('HMGET', KEYS[1], 'state', 'status')
if h[1] ~= 'completed' or h[2] ~= 'failed' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'released')
redis.call('HDEL', KEYS[1], 'result')
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
