-- Sets the worker's slots and waiting where the partition has a record. Uses common.lua.
--
-- KEYS[2i - 1] rec of partition i
-- KEYS[2i] w of partition i
-- ARGV[1] worker
-- ARGV[2] now
-- ARGV[3] leaseMs
-- ARGV[2 + 2i] slots in partition i
-- ARGV[3 + 2i] waiting in partition i
--
-- Returns the (0-based) indexes of the partitions without a record.

local now, leaseMs = tonumber(ARGV[2]), tonumber(ARGV[3])
local missing = {}
for i = 1, #KEYS / 2 do
  if redis.call('EXISTS', KEYS[2 * i - 1]) == 1 then
    local raw = redis.call('HGET', KEYS[2 * i], ARGV[1])
    local me = raw and parse(raw) or zeros()
    me[1] = tonumber(ARGV[2 + 2 * i])
    me[2] = tonumber(ARGV[3 + 2 * i])
    me[3] = now + leaseMs
    redis.call('HSET', KEYS[2 * i], ARGV[1], fmt(me))
  else
    missing[#missing + 1] = i - 1
  end
end
return missing
