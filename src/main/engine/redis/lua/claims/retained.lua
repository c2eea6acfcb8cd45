-- Shared by claim.lua, wait-step.lua and get-result.lua (prepended by redis/lua.ts): whether a
-- completed claim's result is handed out (within retention; truncated only if the operator
-- accepts truncated answers), and a completed claim as the scripts' reply.
-- h is the claim hash read with HMGET in FIELDS' order.

local function retained(h, now, ttl, accept)
  if h[5] == 'truncated' and accept ~= '1' then return false end
  return ttl == 0 or now < tonumber(h[8]) + ttl
end
local function completed(h)
  return {'completed', h[2], tonumber(h[3]), h[5], h[6] or '', h[7] or '', tonumber(h[8])}
end
local FIELDS = {'state', 'owner', 'epoch', 'lease', 'status', 'result', 'cost', 'at'}
