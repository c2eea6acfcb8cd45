-- Appends a batch of a source's ledger rows to the team stream and moves its cursor, only if the
-- cursor is the one the appender expects: two processes on one database never append a row
-- twice, and a reply lost with the connection is harmless (the next attempt reads it again).
--
-- KEYS[1] stream      P ledger
-- KEYS[2] cursors     P ledger:cursors
-- ARGV[1] source
-- ARGV[2] expected cursor ('' = none yet)
-- ARGV[3] next cursor
-- ARGV[4] strings per entry
-- ARGV[5..] the entries' field/value strings
--
-- Returns {1, next} or {0, the cursor as it is}.

local cur = redis.call('HGET', KEYS[2], ARGV[1]) or ''
if cur ~= ARGV[2] then return {0, cur} end
local n = tonumber(ARGV[4])
for i = 5, #ARGV, n do
  redis.call('XADD', KEYS[1], '*', unpack(ARGV, i, i + n - 1))
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return {1, ARGV[3]}
