-- Every partition whose latest lease ends at or after `since`, oldest session first. It reads
-- keys named from the index: one Redis, not a cluster. Uses common.lua.
--
-- KEYS[1] index
-- ARGV[1] now
-- ARGV[2] since
-- ARGV[3] key prefix (P pacing:)
--
-- Returns flat {partition, version, json, inflight, waiting, throttles, successes, errors,
-- workers, activeUntil} per partition.

local now, since = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for _, p in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local rec = redis.call('HMGET', ARGV[3] .. p .. ':rec', 'version', 'json')
  if rec[1] then
    local inflight, waiting, t, s, e, workers, active = 0, 0, 0, 0, 0, 0, 0
    for _, raw in ipairs(redis.call('HVALS', ARGV[3] .. p .. ':w')) do
      local x = parse(raw)
      if x[3] >= now then
        inflight = inflight + x[1]
        waiting = waiting + x[2]
        workers = workers + 1
      end
      t, s, e = t + x[4], s + x[5], e + x[6]
      if x[3] > active then active = x[3] end
    end
    if active >= since then
      for _, f in ipairs({ p, tonumber(rec[1]), rec[2], inflight, waiting, t, s, e, workers,
        active }) do
        out[#out + 1] = f
      end
    end
  end
end
return out
