-- What each cap's period holds, after sweeping dead owners (so a dead machine's reservations come
-- back when anyone looks). Uses common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] now (epoch ms)
-- ARGV[3 + 2i], ARGV[4 + 2i] a cap id and its period key
--
-- Returns per cap: spent, doubt, held, the highest threshold said ('' none).

sweep(tonumber(ARGV[2]))
local out = {}
for i = 3, #ARGV, 2 do
  local s = redis.call('HMGET', spendKey(ARGV[i], ARGV[i + 1]), 'spent', 'doubt', 'held')
  local warned = ''
  for _, p in ipairs(redis.call('SMEMBERS', alertsKey(ARGV[i], ARGV[i + 1]))) do
    if warned == '' or tonumber(p) > tonumber(warned) then warned = p end
  end
  out[#out + 1] = s[1] or '0'
  out[#out + 1] = s[2] or '0'
  out[#out + 1] = s[3] or '0'
  out[#out + 1] = warned
end
return out
