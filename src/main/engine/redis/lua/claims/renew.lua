-- Renews many claims in one round. A claim the server lost is written again when this machine
-- holds it (re-seeding a running claim).
--
-- KEYS[i] the claims
-- ARGV[1] leaseUntil
-- then per claim i: ARGV[3i - 1] epoch, ARGV[3i] owner ('' = any), ARGV[3i + 1] held ('1':
-- this machine holds it)
--
-- Returns one 1 (renewed) or 0 per claim.

local out = {}
for i, key in ipairs(KEYS) do
  local epoch, owner, held = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
  local h = redis.call('HMGET', key, 'state', 'epoch', 'owner')
  if not h[1] and held == '1' then
    redis.call('HSET', key, 'state', 'running', 'owner', owner, 'epoch', epoch, 'lease', ARGV[1])
    out[i] = 1
  elseif h[1] == 'running' and h[2] == epoch and (owner == '' or h[3] == owner) then
    redis.call('HSET', key, 'lease', ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
