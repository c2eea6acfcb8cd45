-- The team's spend caps (team/caps.ts): what every script of caps/ shares. Keys, under the
-- store's prefix P (ARGV[1] of every script; the keys are built here, not passed, as a call's
-- caps and owners are known only inside the script):
--   P caps               hash: cap id -> "capMicros|scope" (scope: the JSON array the client writes)
--   P caps:meta          hash: ver (bumped on every change of a cap), next (the last id given)
--   P caps:spend:ID:KEY  hash per cap and period: spent, doubt, held (micro-dollars), n (holds)
--   P caps:alerts:ID:KEY set of the warning thresholds (percent) said in that period
--   P caps:owners        sorted set: owner (one process) -> its lease's end (epoch ms)
--   P caps:res:OWNER     hash: reservation id -> "sent|micros|ID:KEY;ID:KEY" (sent: 0 or 1)
--   P caps:doubt:OWNER   hash: reservation id -> "micros|ID:KEY;..." of a dead owner's sent calls
-- Amounts are kept as the integer strings the client sends and summed with HINCRBY; Lua's
-- doubles compare them exactly below 2^53 micro-dollars.

local P = ARGV[1]
local CAPS = P .. 'caps'
local META = P .. 'caps:meta'
local OWNERS = P .. 'caps:owners'
-- A dead owner's doubt outlives any period it can be counted in (a month and its stragglers).
local DOUBT_TTL = 40 * 86400

local function spendKey(id, key) return P .. 'caps:spend:' .. id .. ':' .. key end
local function alertsKey(id, key) return P .. 'caps:alerts:' .. id .. ':' .. key end
local function resKey(owner) return P .. 'caps:res:' .. owner end
local function doubtKey(owner) return P .. 'caps:doubt:' .. owner end

local function num(v) return tonumber(v or '0') or 0 end

-- The cap's amount from its hash value, nil when the cap is gone.
local function capOf(id)
  local v = redis.call('HGET', CAPS, id)
  if not v then return nil end
  return tonumber(string.match(v, '^(%d+)|'))
end

-- "ID:KEY;ID:KEY" -> { {id, key}, ... } (KEY is '' for all time).
local function parseHolds(text)
  local holds = {}
  for id, key in string.gmatch(text, '([^:;]+):([^;]*)') do holds[#holds + 1] = { id, key } end
  return holds
end

-- A reservation's value -> sent, micros (string), holds, holds' text.
local function parseRes(v)
  local sent, micros, rest = string.match(v, '^(%d)|(%d+)|(.*)$')
  return sent == '1', micros, parseHolds(rest), rest
end

-- Takes a reservation's worst case off the holds of every cap it held.
local function unhold(holds, micros)
  for _, h in ipairs(holds) do
    local k = spendKey(h[1], h[2])
    redis.call('HINCRBY', k, 'held', '-' .. micros)
    redis.call('HINCRBY', k, 'n', -1)
  end
end

-- Owners whose lease ran out (a dead or stalled process): a reservation not sent comes back, a
-- sent one may have been billed and stays counted, as doubt, until its answer is settled.
local function sweep(now)
  local dead = redis.call('ZRANGEBYSCORE', OWNERS, '-inf', '(' .. now, 'LIMIT', 0, 16)
  for _, owner in ipairs(dead) do
    local all = redis.call('HGETALL', resKey(owner))
    for i = 1, #all, 2 do
      local sent, micros, holds, rest = parseRes(all[i + 1])
      unhold(holds, micros)
      if sent then
        for _, h in ipairs(holds) do redis.call('HINCRBY', spendKey(h[1], h[2]), 'doubt', micros) end
        redis.call('HSET', doubtKey(owner), all[i], micros .. '|' .. rest)
        redis.call('EXPIRE', doubtKey(owner), DOUBT_TTL)
      end
    end
    redis.call('DEL', resKey(owner))
    redis.call('ZREM', OWNERS, owner)
  end
end

-- The caps changed since the client read them: it reads them again (version, then id/value pairs).
local function stale(ver)
  return { 'stale', ver, redis.call('HGETALL', CAPS) }
end
