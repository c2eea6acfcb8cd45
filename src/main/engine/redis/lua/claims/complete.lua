-- Fenced completion: only the claim's holder at its epoch completes it.
--
-- KEYS[1] claim
-- KEYS[2] channel     P claims:done
-- KEYS[3] gen
-- ARGV[1] epoch
-- ARGV[2] owner ('' = any)
-- ARGV[3] result
-- ARGV[4] status
-- ARGV[5] cost ('' = null)
-- ARGV[6] at: completed_at
-- ARGV[7] gcMs ('0' = never expires)
-- ARGV[8] fp, published on the channel
-- ARGV[9] again ('1': a retry after a reply lost on the way; the same epoch and owner
--         completed already is then this completion)
-- ARGV[10] knownGen
--
-- Returns 1 completed, 0 fenced, -1 the data is not the one this machine knows (re-seed, then
-- again: a completion held through a restart must find its claim written back, not missing).

if redis.call('GET', KEYS[3]) ~= ARGV[10] then return -1 end
local h = redis.call('HMGET', KEYS[1], 'state', 'epoch', 'owner')
local mine = h[2] == ARGV[1] and (ARGV[2] == '' or h[3] == ARGV[2])
if ARGV[9] == '1' and h[1] == 'completed' and mine then return 1 end
if h[1] ~= 'running' or not mine then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'status', ARGV[4], 'result', ARGV[3],
  'cost', ARGV[5], 'at', ARGV[6])
if ARGV[7] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[7]) end
redis.call('PUBLISH', KEYS[2], ARGV[8])
return 1
