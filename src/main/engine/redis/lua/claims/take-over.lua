-- Takes over a running claim whose lease ran out, if it is still at the expected epoch.
--
-- KEYS[1] claim
-- ARGV[1] owner
-- ARGV[2] expectedEpoch
-- ARGV[3] now
-- ARGV[4] leaseUntil
--
-- Returns 1 taken over, 0 not.

local h = redis.call('HMGET', KEYS[1], 'state', 'epoch', 'lease')
if h[1] ~= 'running' or h[2] ~= ARGV[2] or tonumber(h[3]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', tonumber(h[2]) + 1, 'lease', ARGV[4])
return 1
