-- Reserves a call's worst case under every team cap that covers it, in the period each falls in
-- now: one script, so no interleaving of machines can take the same dollar twice. Uses common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] the caps' version the client computed its list from
-- ARGV[3] owner (this process)
-- ARGV[4] now (epoch ms)
-- ARGV[5] leaseMs
-- ARGV[6] micros, '' when the model has no price
-- ARGV[7] reservation id (unique for the owner)
-- ARGV[8 + 2i], ARGV[9 + 2i] a cap id and its period key, for each cap that covers the call
--
-- Returns {'stale', ver, caps...} | {'uncapped'} | {'unpriced'} | {'wait'} | {'reserved'}
--   | {'stop', cap id, period key, spent + doubt, 1 when its 100 % is said for the first time}

local ver = redis.call('HGET', META, 'ver') or '0'
if ver ~= ARGV[2] then return stale(ver) end
local now, owner, id = tonumber(ARGV[4]), ARGV[3], ARGV[7]
sweep(now)
if #ARGV < 8 then return { 'uncapped' } end
if ARGV[6] == '' then return { 'unpriced' } end
redis.call('ZADD', OWNERS, now + tonumber(ARGV[5]), owner)
-- A retry after a reply lost on the way: it is held already.
if redis.call('HEXISTS', resKey(owner), id) == 1 then return { 'reserved' } end
local micros = tonumber(ARGV[6])
local wait = false
local holds = {}
for i = 8, #ARGV, 2 do
  local cap, key = ARGV[i], ARGV[i + 1]
  local amount = capOf(cap)
  local s = redis.call('HMGET', spendKey(cap, key), 'spent', 'doubt', 'held', 'n')
  local spent = num(s[1]) + num(s[2])
  local full = spent + micros > amount
  if not full and spent + num(s[3]) + micros > amount then
    -- Calls in flight hold the rest; each settles at or below what it holds.
    if num(s[4]) > 0 then wait = true else full = true end
  end
  if full then
    return { 'stop', cap, key, string.format('%d', spent), redis.call('SADD', alertsKey(cap, key), '100') }
  end
  holds[#holds + 1] = cap .. ':' .. key
end
if wait then return { 'wait' } end
for i = 8, #ARGV, 2 do
  local k = spendKey(ARGV[i], ARGV[i + 1])
  redis.call('HINCRBY', k, 'held', ARGV[6])
  redis.call('HINCRBY', k, 'n', 1)
end
redis.call('HSET', resKey(owner), id, '0|' .. ARGV[6] .. '|' .. table.concat(holds, ';'))
return { 'reserved' }
