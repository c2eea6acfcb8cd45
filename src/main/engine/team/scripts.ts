// Every Lua script of the team store as node-redis's createClient takes them (`scripts`): each
// becomes a method of the client (`client.claimsClaim(keys, args)`) that sends EVALSHA and, on
// NOSCRIPT (a server new or restarted), EVAL with the source. The method names are the scripts'
// own, prefixed by their store, so none hides one of the client's commands (`append` is APPEND).
import type { CommandParser, RedisScripts, defineScript } from '@redis/client'
import { CLAIM_SCRIPTS } from '../claims/redis/scripts'
import { PACING_SCRIPTS } from '../pacing/redis-scripts'
import type { LuaScript } from '../redis/lua'
import { APPEND } from './ledger/stream'
import { CAP_SCRIPTS } from '../pacing/team-caps'

export const TEAM_SCRIPTS: readonly LuaScript[] = [
  ...CLAIM_SCRIPTS,
  ...PACING_SCRIPTS,
  APPEND,
  ...CAP_SCRIPTS,
]

/**
 * The team's scripts for `createClient({ scripts })`. `define` is @redis/client's defineScript,
 * passed in because the client library is loaded only in team mode (team/connect.ts).
 */
export function clientScripts(define: typeof defineScript): RedisScripts {
  const scripts: RedisScripts = {}
  for (const s of TEAM_SCRIPTS) {
    scripts[s.method] = define({
      SCRIPT: s.source,
      parseCommand(parser: CommandParser, keys: string[], args: string[]) {
        parser.pushKeysLength(keys)
        parser.push(...args)
      },
      // The reply as the server sent it, as sendCommand gives it: the stores read it themselves.
      transformReply: (reply: unknown) => reply,
    })
  }
  return scripts
}
