// The team store's Lua scripts are .lua files under redis/lua/, each with its KEYS/ARGV contract
// in its header, read once when the module loads. They are read from disk, not imported with
// Vite's `?raw`: the CLI and the child processes of the tests run the TypeScript sources under
// tsx, which has no `?raw` (it loads the file as JavaScript). The desktop bundle is
// out/main/index.js, and electron.vite.config.ts copies redis/lua/ to out/main/lua/: __dirname
// is that folder's parent in both (keep this module in the main chunk).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const LUA_DIR = join(__dirname, 'lua')

/** A script of the team store: node-redis runs it as the client method `method` (team/scripts.ts). */
export interface LuaScript {
  readonly method: string
  readonly source: string
}

/**
 * The script in `file` (under redis/lua/, without `.lua`), after the files it uses (their
 * functions and constants: Redis has no include, so they are sent as one source).
 */
export function lua(method: string, file: string, ...uses: string[]): LuaScript {
  const source = [...uses, file].map((f) => readFileSync(join(LUA_DIR, `${f}.lua`), 'utf8'))
  return { method, source: source.join('\n') }
}
