-- Claims written only where the server has none (a re-seed).
--
-- KEYS[i] the claims
-- ARGV per claim i, 8 values from ARGV[8(i - 1) + 1]: state, owner, epoch, lease, status,
-- result, cost, at
-- ARGV[#ARGV] gcMs ('0' = never expires)
--
-- Returns how many were written.

local n = 0
local gc = ARGV[#ARGV]
for i, key in ipairs(KEYS) do
  local b = 8 * (i - 1)
  if redis.call('EXISTS', key) == 0 then
    if ARGV[b + 1] == 'completed' then
      redis.call('HSET', key, 'state', 'completed', 'owner', ARGV[b + 2], 'epoch', ARGV[b + 3],
        'lease', ARGV[b + 4], 'status', ARGV[b + 5], 'result', ARGV[b + 6], 'cost', ARGV[b + 7],
        'at', ARGV[b + 8])
      if gc ~= '0' then redis.call('PEXPIRE', key, gc) end
    else
      redis.call('HSET', key, 'state', 'running', 'owner', ARGV[b + 2], 'epoch', ARGV[b + 3],
        'lease', ARGV[b + 4])
    end
    n = n + 1
  end
end
return n
