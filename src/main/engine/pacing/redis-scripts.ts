// The pacing store's operations in Redis, each one Lua script: Redis runs a script alone, so the
// count of live slots and the take (or the free, or a record's compare-and-set on its version)
// are one atomic step, as one statement or IMMEDIATE transaction is in SQLite (store-sqlite.ts).
//
// Keys, under the store's prefix P: `P{partition}:rec` a hash (json: the record without its
// version, version, conc: its concurrency, paused: its pausedUntil, session: when the session
// began), `P{partition}:w` a hash of the partition's workers, each "slots waiting leaseUntil
// throttles successes errors" as integers (exact, unlike Lua's JSON numbers), and `P index` a
// sorted set of partitions by session start. Times are the callers' epoch ms, as in every store.
// The record hash's `budget` field is the shared announced budget (redis-budget.ts, budget.lua).
import { lua, type LuaScript } from '../redis/lua'

// Each script's KEYS, ARGV and reply are in its file's header (redis/lua/pacing/); common.lua
// (the workers hash's entries, the slot count) comes first in every one, budget.lua
// (redis-budget.ts) in those that admit and release.
const COMMON = 'pacing/common'
const BUDGET = 'pacing/budget'

export const JOIN = lua('pacingJoin', 'pacing/join', COMMON)
export const ADMIT = lua('pacingAdmit', 'pacing/admit', COMMON, BUDGET)
export const CHECK = lua('pacingCheck', 'pacing/check', COMMON)
export const RELEASE = lua('pacingRelease', 'pacing/release', COMMON, BUDGET)
export const WRITE = lua('pacingWrite', 'pacing/write', COMMON)
export const HEARTBEAT = lua('pacingHeartbeat', 'pacing/heartbeat', COMMON)
export const VIEWS = lua('pacingViews', 'pacing/views', COMMON)

/** The pacing store's scripts, for the client that runs them (team/scripts.ts). */
export const PACING_SCRIPTS: readonly LuaScript[] = [
  JOIN,
  ADMIT,
  CHECK,
  RELEASE,
  WRITE,
  HEARTBEAT,
  VIEWS,
]
