import { readFileSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import type { Plugin } from 'vite'
import react from '@vitejs/plugin-react'

const LUA_DIR = resolve(__dirname, 'src/main/engine/redis/lua')

/**
 * The team store's Lua scripts are read at run time from a `lua` folder beside the code that
 * reads them (src/main/engine/redis/lua.ts): the CLI runs the sources under tsx, which cannot
 * import a file as text. In the bundle that code is out/main/index.js, so the folder is copied to
 * out/main/lua, as BullMQ's build copies its commands/*.lua.
 */
function luaScripts(): Plugin {
  return {
    name: 'pacer:lua-scripts',
    generateBundle() {
      for (const file of readdirSync(LUA_DIR, { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.lua')) continue
        const source = readFileSync(join(LUA_DIR, file), 'utf8')
        this.emitFile({ type: 'asset', fileName: `lua/${file}`, source })
      }
    },
  }
}

export default defineConfig({
  main: {
    build: {
      externalizeDeps: true,
      rollupOptions: {
        input: { index: resolve(__dirname, 'src/main/desktop/index.ts') },
      },
    },
    plugins: [luaScripts()],
  },
  preload: {
    build: {
      // A sandboxed preload can only require('electron'): bundle everything else into it.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(__dirname, 'src/preload/index.ts') },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src/renderer'),
    build: {
      rollupOptions: {
        input: { index: resolve(__dirname, 'src/renderer/index.html') },
      },
    },
    plugins: [react()],
  },
})
