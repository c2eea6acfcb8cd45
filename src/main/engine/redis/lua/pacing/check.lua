-- What a decision is made on. Uses common.lua.
--
-- KEYS[1] rec
-- KEYS[2] w
-- ARGV[1] worker
-- ARGV[2] now
-- ARGV[3] known version
--
-- Returns {found (0: no record), version, inflight, json if not the known version}.

local v = redis.call('HGET', KEYS[1], 'version')
if not v then return { 0 } end
local inflight = count(KEYS[2], ARGV[1], tonumber(ARGV[2]))
local json = ''
if v ~= ARGV[3] then json = redis.call('HGET', KEYS[1], 'json') end
return { 1, tonumber(v), inflight, json }
