-- The team caps and their version, read together. Uses common.lua.
--
-- ARGV[1] prefix
--
-- Returns {ver, caps...} (id/value pairs).

return { redis.call('HGET', META, 'ver') or '0', redis.call('HGETALL', CAPS) }
