-- A compare-and-set of the record. Uses common.lua.
--
-- KEYS[1] rec
-- ARGV[1] expected version
-- ARGV[2] json
-- ARGV[3] conc
-- ARGV[4] paused
--
-- Returns {1, version}, {2 (moved), version, json} or {-1}.

local v = redis.call('HGET', KEYS[1], 'version')
if not v then return { -1 } end
if v ~= ARGV[1] then return { 2, tonumber(v), redis.call('HGET', KEYS[1], 'json') } end
local nv = tonumber(v) + 1
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'version', nv, 'conc', ARGV[3], 'paused', ARGV[4])
return { 1, nv }
