-- Shared by every pacing script (prepended by redis/lua.ts): a worker's entry in the
-- partition's workers hash is "slots waiting leaseUntil throttles successes errors" as integers
-- (exact, unlike Lua's JSON numbers).

local function parse(v)
  local s, w, l, t, o, e = string.match(v, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
  return { tonumber(s), tonumber(w), tonumber(l), tonumber(t), tonumber(o), tonumber(e) }
end
local function fmt(x)
  return string.format('%d %d %d %d %d %d', x[1], x[2], x[3], x[4], x[5], x[6])
end
local function zeros() return { 0, 0, 0, 0, 0, 0 } end
-- A worker's own slots always count for itself, even if its lease ran out unnoticed; the
-- others' only under a live lease.
local function count(wkey, worker, now)
  local all = redis.call('HGETALL', wkey)
  local inflight, othersWaiting, waitingWorkers, mine, me = 0, 0, 0, 0, nil
  for i = 1, #all, 2 do
    local x = parse(all[i + 1])
    if all[i] == worker then
      inflight = inflight + x[1]
      mine = x[1]
      me = x
    elseif x[3] >= now then
      inflight = inflight + x[1]
      othersWaiting = othersWaiting + x[2]
      if x[2] > 0 then waitingWorkers = waitingWorkers + 1 end
    end
  end
  return inflight, othersWaiting, waitingWorkers, mine, me
end
local function share(conc, waitingWorkers)
  if waitingWorkers == 0 then return math.huge end
  return math.ceil(conc / (waitingWorkers + 1))
end
