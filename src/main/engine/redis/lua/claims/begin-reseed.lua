-- A re-seed begins. A missing marker is written (with the grace in which nobody claims, so every
-- machine connected has the time to notice and join); the machine is among the re-seeding ones
-- until it ends or its deadline passes.
--
-- KEYS[1] gen
-- KEYS[2] grace
-- KEYS[3] reseeding
-- ARGV[1] newGen
-- ARGV[2] worker
-- ARGV[3] deadline
-- ARGV[4] graceUntil
-- ARGV[5] graceMs
-- ARGV[6] knownGen
--
-- Returns {gen, created (1/0)}.

local gen = redis.call('GET', KEYS[1])
local created = 0
if not gen then
  gen = ARGV[1]
  created = 1
  redis.call('SET', KEYS[1], gen)
  if tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5]) end
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
return {gen, created}
