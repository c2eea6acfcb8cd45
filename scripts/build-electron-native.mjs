#!/usr/bin/env node
// `npm run build:electron-native`: builds better-sqlite3 for Electron's ABI into
// build/electron-native/better_sqlite3.node, the file the desktop app loads through
// better-sqlite3's `nativeBinding` option (src/main/desktop/native-binding.ts).
//
// Why not @electron/rebuild or `electron-builder install-app-deps`: they rebuild node_modules in
// place, replacing the Node-ABI build the tests and the CLI load; and run through npm on a machine
// without Electron's headers they print success while building for Node's ABI (npm's nodedir
// leaks in). So this script:
//   - builds in a temporary copy of the package: node_modules is never written;
//   - calls node-gyp directly with --target/--dist-url, with every npm_config_* variable removed;
//   - checks the result really is Electron's ABI (Node must refuse to load it, naming Electron's
//     NODE_MODULE_VERSION) before putting it in place, atomically.
// It needs the internet (Electron's headers). Without it, it fails with one line and changes
// nothing.
//
// Options: --arch=<arch> (default: this machine's), --force (rebuild even if up to date).
import { spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT_DIR = join(ROOT, 'build', 'electron-native')
const OUT_FILE = join(OUT_DIR, 'better_sqlite3.node')
const INFO_FILE = join(OUT_DIR, 'BUILD_INFO.json')
const LOG_FILE = join(tmpdir(), 'pacer-build-electron-native.log')
const DIST_URL = 'https://electronjs.org/headers'

const arg = (name) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? null
const arch = arg('arch') ?? process.arch
const force = process.argv.includes('--force')

function fail(line) {
  console.error(`build-electron-native: ${line}`)
  process.exit(1)
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))
const electronDir = join(ROOT, 'node_modules', 'electron')
const sqliteDir = join(ROOT, 'node_modules', 'better-sqlite3')
const nodeGyp = join(ROOT, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
for (const [what, path] of [
  ['electron', electronDir],
  ['better-sqlite3', sqliteDir],
  ['node-gyp', nodeGyp],
]) {
  if (!existsSync(path)) fail(`${what} is not installed (run \`npm ci\` first)`)
}
const electronVersion = readJson(join(electronDir, 'package.json')).version
const sqliteVersion = readJson(join(sqliteDir, 'package.json')).version
// Electron's npm package ships its NODE_MODULE_VERSION; the check below relies on it.
const electronAbi = readFileSync(join(electronDir, 'abi_version'), 'utf8').trim()
const wanted = {
  electron: electronVersion,
  abi: electronAbi,
  betterSqlite3: sqliteVersion,
  platform: process.platform,
  arch,
}

if (!force && existsSync(OUT_FILE) && existsSync(INFO_FILE)) {
  const info = readJson(INFO_FILE)
  if (Object.entries(wanted).every(([k, v]) => info[k] === v)) {
    console.log(
      `build-electron-native: up to date (better-sqlite3 ${sqliteVersion} for Electron ${electronVersion}, ${arch})`,
    )
    process.exit(0)
  }
}

const work = mkdtempSync(join(tmpdir(), 'pacer-electron-native-'))
const cleanup = () => rmSync(work, { recursive: true, force: true })
process.on('exit', cleanup)

// A copy without build/: node-gyp writes only there, and node_modules' build stays the Node one.
const pkgCopy = join(work, 'better-sqlite3')
cpSync(sqliteDir, pkgCopy, {
  recursive: true,
  filter: (src) => !src.startsWith(join(sqliteDir, 'build')),
})

// npm exports its config as npm_config_*; node-gyp reads those (nodedir, target, runtime...) and
// they would silently override the flags below.
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !/^npm_config_/i.test(k) && k !== 'npm_package_config_node_gyp',
  ),
)
// A quick look at the headers URL decides whether to announce a build (online: it takes a minute
// or two) or stay quiet (offline: the only output is the one failure line). node-gyp still makes
// the final call, since it honours proxy settings that fetch does not.
const headersUrl = `${DIST_URL}/v${electronVersion}/node-v${electronVersion}-headers.tar.gz`
const reachable = await fetch(headersUrl, {
  method: 'HEAD',
  signal: AbortSignal.timeout(10_000),
}).then(
  (res) => res.ok,
  () => false,
)
if (reachable) {
  console.log(
    `build-electron-native: building better-sqlite3 ${sqliteVersion} for Electron ${electronVersion} ` +
      `(ABI ${electronAbi}, ${process.platform}-${arch})...`,
  )
}
const build = spawnSync(
  process.execPath,
  [
    nodeGyp,
    'rebuild',
    '--release',
    `--target=${electronVersion}`,
    `--arch=${arch}`,
    `--dist-url=${DIST_URL}`,
    `--devdir=${join(homedir(), '.electron-gyp')}`,
  ],
  { cwd: pkgCopy, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
)
const log = `${build.stdout ?? ''}\n${build.stderr ?? ''}`
writeFileSync(LOG_FILE, log)
if (build.status !== 0) {
  const network =
    /network connectivity|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|getaddrinfo|socket hang up|certificate/i
  // Offline, node-gyp never gets as far as spawning the compiler.
  if (network.test(log) || (!reachable && !/gyp info spawn/.test(log))) {
    fail(
      `cannot download Electron ${electronVersion}'s headers from ${DIST_URL} (no internet?); ` +
        `nothing was changed. Run this on a machine with internet access (log: ${LOG_FILE})`,
    )
  }
  fail(
    `node-gyp failed to compile better-sqlite3 for Electron ${electronVersion}; nothing was changed (log: ${LOG_FILE})`,
  )
}

const built = join(pkgCopy, 'build', 'Release', 'better_sqlite3.node')
if (!existsSync(built))
  fail(`node-gyp reported success but produced no ${built}; nothing was changed`)

// The ABI check: this Node must refuse the file and name Electron's module version. If Node loads
// it, it was built for Node (the trap @electron/rebuild falls into offline) and must not ship.
// Only meaningful for this machine's architecture; a cross-arch build cannot be dlopen()ed here.
let verified = 'not checked (cross-architecture build)'
if (arch === process.arch) {
  const probe = spawnSync(
    process.execPath,
    ['-e', `process.dlopen({ exports: {} }, ${JSON.stringify(built)})`],
    { encoding: 'utf8', env },
  )
  if (probe.status === 0) {
    fail(
      `the build loads in Node ${process.version}: it is Node's ABI, not Electron's; nothing was changed`,
    )
  }
  if (probe.stderr.includes(`NODE_MODULE_VERSION ${electronAbi}`)) {
    verified = `Node refuses it as NODE_MODULE_VERSION ${electronAbi} (Electron's)`
  } else {
    console.warn(
      `build-electron-native: warning: could not confirm the ABI (${probe.stderr.split('\n').find((l) => l.includes('Error')) ?? 'no error text'})`,
    )
    verified = 'unconfirmed'
  }
}

mkdirSync(OUT_DIR, { recursive: true })
const staging = `${OUT_FILE}.${process.pid}.tmp`
cpSync(built, staging)
renameSync(staging, OUT_FILE)
writeFileSync(
  INFO_FILE,
  JSON.stringify({ ...wanted, verified, builtAt: new Date().toISOString() }, null, 2) + '\n',
)
console.log(`build-electron-native: wrote ${OUT_FILE.slice(ROOT.length + 1)} (${verified})`)
