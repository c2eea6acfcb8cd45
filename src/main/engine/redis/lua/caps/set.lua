-- Adds a team cap, or changes the amount of the one with the same scope; its thresholds start
-- again, those the period's spend already passes counted as said. A new cap starts from the spend
-- the client summed from the team ledger for its period. Uses common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] scope (the JSON array the client writes: the same text for the same scope)
-- ARGV[3] capMicros
-- ARGV[4] the current period's key
-- ARGV[5] the period's spend so far, for a new cap (micros)
--
-- Returns the cap's id.

local id
local all = redis.call('HGETALL', CAPS)
for i = 1, #all, 2 do
  if string.match(all[i + 1], '^%d+|(.*)$') == ARGV[2] then id = all[i] end
end
local k = spendKey(id or '', ARGV[4])
if not id then
  id = tostring(redis.call('HINCRBY', META, 'next', 1))
  k = spendKey(id, ARGV[4])
  redis.call('HSET', k, 'spent', ARGV[5])
end
redis.call('HSET', CAPS, id, ARGV[3] .. '|' .. ARGV[2])
redis.call('DEL', alertsKey(id, ARGV[4]))
local s = redis.call('HMGET', k, 'spent', 'doubt')
local spent, amount = num(s[1]) + num(s[2]), tonumber(ARGV[3])
for _, percent in ipairs({ 50, 80, 100 }) do
  if spent * 100 >= amount * percent then redis.call('SADD', alertsKey(id, ARGV[4]), percent) end
end
redis.call('HINCRBY', META, 'ver', 1)
return id
