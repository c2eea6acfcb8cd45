-- Releases a running claim held at this epoch (by this owner), so another machine may claim it.
--
-- KEYS[1] claim
-- KEYS[2] channel
-- ARGV[1] epoch
-- ARGV[2] owner ('' = any)
-- ARGV[3] now
-- ARGV[4] gcMs ('0' = never expires)
-- ARGV[5] fp, published on the channel
--
-- Returns 1 released, 0 not.

local h = redis.call('HMGET', KEYS[1], 'state', 'epoch', 'owner')
if h[1] ~= 'running' or h[2] ~= ARGV[1] or (ARGV[2] ~= '' and h[3] ~= ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'state', 'released', 'lease', ARGV[3])
if ARGV[4] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
redis.call('PUBLISH', KEYS[2], ARGV[5])
return 1
