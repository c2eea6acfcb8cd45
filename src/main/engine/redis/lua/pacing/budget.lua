-- The shared announced budget's rules (shared-budget.ts) in Lua, prepended by redis/lua.ts to the
-- scripts that admit and release: the check, the charge and the settling run in the same script
-- as the slot's take or free, so a call is admitted only when the slots and the budget both allow
-- it. The budget is the `budget` field of the partition's record hash, as JSON (Redis's cjson),
-- in the same shape as SQLite's column: { s, c: cumulative cost, d: buckets { l, p, v, t, q } }.
-- Functions: bload(key), bsave(key, budget), bwait(budget, now, cost), bcharge(budget, now,
-- cost), bsettle(budget, settle, now).

local DIMS = { 'requests', 'tokens', 'input-tokens', 'output-tokens' }
local function blevel(b, now)
  local x = b.v + b.p * math.max(0, now - b.t)
  if x > b.l then x = b.l end
  return x
end
local function bload(key)
  local raw = redis.call('HGET', key, 'budget')
  if not raw then return { s = 0, c = {}, d = {} } end
  return cjson.decode(raw)
end
local function bsave(key, bud)
  redis.call('HSET', key, 'budget', cjson.encode(bud))
end
-- Ms until a call of this cost fits every bucket; a call bigger than a bucket waits for it full.
local function bwait(bud, now, cost)
  local wait = 0
  for _, dim in ipairs(DIMS) do
    local b = bud.d[dim]
    if b then
      local need = math.min(b.l, cost[dim] or 0)
      local lv = blevel(b, now)
      if lv < need then
        local w = 60000
        if b.p > 0 then w = (need - lv) / b.p end
        if w > wait then wait = w end
      end
    end
  end
  return math.ceil(wait)
end
-- Nothing announced yet: nothing counted (the ticket is seq 0). False when so.
local function bcharge(bud, now, cost)
  if next(bud.d) == nil then return false end
  bud.s = bud.s + 1
  for _, dim in ipairs(DIMS) do
    local x = cost[dim] or 0
    bud.c[dim] = (bud.c[dim] or 0) + x
    local b = bud.d[dim]
    if b then
      b.v = blevel(b, now) - x
      b.t = now
    end
  end
  return true
end
-- st: { q = ticket seq, sp = ticket's cumulative cost, r = reading, f = correction }
local function bsettle(bud, st, now)
  local changed = false
  for _, dim in ipairs(DIMS) do
    local b = bud.d[dim]
    local r = st.r and st.r[dim]
    if r then
      if not b or st.q > b.q then
        local c = bud.c[dim] or 0
        local since = c - (st.sp[dim] or c)
        bud.d[dim] = { l = r.limit, p = r.ratePerMs, v = r.refilled - since, t = now, q = st.q }
        changed = true
      end
    else
      local fix = st.f and st.f[dim]
      if b and fix and fix ~= 0 and st.q > b.q then
        b.v = blevel(b, now) - fix
        b.t = now
        changed = true
      end
    end
  end
  return changed
end
