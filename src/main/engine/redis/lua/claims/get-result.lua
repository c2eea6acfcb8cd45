-- A completed claim's result, if it is handed out. Uses retained.lua.
--
-- KEYS[1] claim
-- ARGV[1] now
-- ARGV[2] ttl
-- ARGV[3] accept
--
-- Returns {'completed', ...} as claim.lua, or {'none'}.

local h = redis.call('HMGET', KEYS[1], unpack(FIELDS))
if h[1] == 'completed' and retained(h, tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]) then
  return completed(h)
end
return {'none'}
