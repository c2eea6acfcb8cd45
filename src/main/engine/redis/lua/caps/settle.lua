-- Settles a call to its ledger row's cost: its reservation goes (or, if its owner was taken for
-- dead meanwhile, its doubt), and the cost is spent under every cap that covers the call, in the
-- period its reservation held (else the one given). Says each warning threshold the cost crosses,
-- first across the team. Uses common.lua.
--
-- ARGV[1] prefix
-- ARGV[2] the caps' version the client computed its list from
-- ARGV[3] owner
-- ARGV[4] reservation id, '' when the call held none
-- ARGV[5] cost (micros, '0' when none)
-- ARGV[6 + 2i], ARGV[7 + 2i] a cap id and its period key, for each cap that covers the call
--
-- Returns {'stale', ver, caps...} | {'done'} (settled before: a retry) | {'ok', alerts...} with
-- each alert as 4 values: cap id, period key, percent, spent + doubt after the cost.

local ver = redis.call('HGET', META, 'ver') or '0'
if ver ~= ARGV[2] then return stale(ver) end
local owner, id = ARGV[3], ARGV[4]
local heldIn = {}
if id ~= '' then
  local v = redis.call('HGET', resKey(owner), id)
  local micros, holds
  if v then
    local _
    _, micros, holds = parseRes(v)
    unhold(holds, micros)
    redis.call('HDEL', resKey(owner), id)
  else
    local d = redis.call('HGET', doubtKey(owner), id)
    if not d then return { 'done' } end
    local rest
    micros, rest = string.match(d, '^(%d+)|(.*)$')
    holds = parseHolds(rest)
    for _, h in ipairs(holds) do redis.call('HINCRBY', spendKey(h[1], h[2]), 'doubt', '-' .. micros) end
    redis.call('HDEL', doubtKey(owner), id)
  end
  for _, h in ipairs(holds) do heldIn[h[1]] = h[2] end
end
local cost = tonumber(ARGV[5])
local out = { 'ok' }
if cost == 0 then return out end
for i = 6, #ARGV, 2 do
  local cap = ARGV[i]
  local key = heldIn[cap] or ARGV[i + 1]
  local amount = capOf(cap)
  if amount then
    local k = spendKey(cap, key)
    local s = redis.call('HMGET', k, 'spent', 'doubt')
    local before = num(s[1]) + num(s[2])
    redis.call('HINCRBY', k, 'spent', ARGV[5])
    local after = before + cost
    for _, percent in ipairs({ 50, 80, 100 }) do
      local line = amount * percent / 100
      if before < line and after >= line and redis.call('SADD', alertsKey(cap, key), percent) == 1 then
        out[#out + 1] = cap
        out[#out + 1] = key
        out[#out + 1] = percent
        out[#out + 1] = string.format('%d', after)
      end
    end
  end
end
return out
