#!/usr/bin/env node
// `npm start`: builds the console (electron-vite build), then opens it in Electron — or, where no
// Electron binary can be obtained (this project's CI and dev machines have no internet but npm),
// says so in one line and opens the same console in the browser through `pacer serve --open`.
//
// The binary is resolved with `require('electron')` in a child process: on a first run with
// internet that call downloads it, and offline it fails noisily; the child keeps that noise out
// of the way, and only a download that takes a while is announced.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const ELECTRON_VITE = join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js')

const built = spawnSync(process.execPath, [ELECTRON_VITE, 'build'], { cwd: ROOT, stdio: 'inherit' })
if (built.status !== 0) {
  console.error('start: `electron-vite build` failed (see above)')
  process.exit(built.status ?? 1)
}

/** Resolves the Electron executable, or null with the reason. */
function resolveElectron() {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['-e', 'process.stdout.write(String(require("electron")))'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const slow = setTimeout(
      () => console.log('start: fetching the Electron binary (first run only)...'),
      3000,
    )
    child.on('close', (code) => {
      clearTimeout(slow)
      const path = out.trim()
      if (code === 0 && path && existsSync(path)) resolve({ path })
      else {
        const reason =
          `${err}`.match(/Electron failed to install correctly/)?.[0] ??
          (`${err}`.trim().split('\n').pop() || `exit code ${code}`)
        resolve({ path: null, reason })
      }
    })
  })
}

/** Runs a child to completion, forwarding Ctrl-C / SIGTERM so it can shut down cleanly. */
function runForwarding(command, args, env = process.env) {
  const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env })
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
  child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}

const electron = await resolveElectron()
// The desktop app loads better-sqlite3 built for Electron's ABI, kept apart from the Node build
// the CLI and tests use. Build it on the first start (it needs Electron's headers: internet).
const NATIVE = join(ROOT, 'build', 'electron-native', 'better_sqlite3.node')
if (electron.path && !existsSync(NATIVE)) {
  console.log('start: building better-sqlite3 for Electron (first start only)...')
  const native = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-electron-native.mjs')], {
    cwd: ROOT,
    stdio: 'inherit',
  })
  if (native.status !== 0) {
    electron.path = null
    electron.reason = 'better-sqlite3 could not be built for Electron'
  }
}
if (electron.path) {
  // ELECTRON_RUN_AS_NODE (set by some shells and IDE terminals) would run main as plain Node.
  const env = { ...process.env }
  delete env.ELECTRON_RUN_AS_NODE
  runForwarding(electron.path, ['.'], env)
} else {
  console.log(
    `start: the Electron binary could not be obtained (${electron.reason}), ` +
      'so the console opens in your browser through `pacer serve` instead.',
  )
  runForwarding(process.execPath, [join(ROOT, 'bin', 'pacer.cjs'), 'serve', '--open'])
}
