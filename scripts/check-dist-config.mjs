#!/usr/bin/env node
// `npm run dist:check`: validates electron-builder.yml offline.
//
// 1. electron-builder's own schema validation, called programmatically: the same getConfig() +
//    validateConfiguration() that `electron-builder` runs before it packages anything. Nothing is
//    downloaded. These live in app-builder-lib's internal module path (not a public API): if a
//    future version moves them, this script fails saying so rather than passing silently.
// 2. Project checks the schema cannot know: icons exist and are big enough, the Electron-ABI
//    better-sqlite3 is shipped and npm rebuilds are off, the build output is packaged.
// 3. With --pack: also runs `electron-builder --linux dir` into a temp folder. Offline, that stops
//    at the Electron download; reaching the download means the config got through packaging setup.
//    The output says which of the three outcomes happened.
//
// Exit code 0 = valid, 1 = invalid (or the validator could not be loaded).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
// PACER_BUILDER_CONFIG lets the test check that a broken config is refused.
const CONFIG = process.env.PACER_BUILDER_CONFIG ?? join(ROOT, 'electron-builder.yml')
const require = createRequire(join(ROOT, 'package.json'))
const problems = []
const notes = []

let builderVersion = '?'
let config
try {
  builderVersion = require('electron-builder/package.json').version
  const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config')
  const { DebugLogger } = require('builder-util')
  config = await getConfig(ROOT, CONFIG, null)
  await validateConfiguration(config, new DebugLogger(false))
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    console.error(
      `check-dist-config: cannot load electron-builder's validator (${err.message.split('\n')[0]}); ` +
        'the internal module path may have moved in this version',
    )
  } else {
    console.error(`check-dist-config: electron-builder.yml is INVALID\n${err?.message ?? err}`)
  }
  process.exit(1)
}

// ------------------------------------------------------------------ project checks

function pngSize(file) {
  const b = readFileSync(file)
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47) return null
  return [b.readUInt32BE(16), b.readUInt32BE(20)]
}

for (const [platform, min] of [
  ['mac', 512],
  ['linux', 512],
  ['win', 256],
]) {
  const icon = config[platform]?.icon
  if (!icon) {
    problems.push(`${platform}.icon is not set: the default Electron icon would ship`)
    continue
  }
  const file = join(ROOT, icon)
  if (!existsSync(file)) {
    problems.push(`${platform}.icon ${icon} does not exist (run \`node scripts/make-icons.mjs\`)`)
    continue
  }
  if (icon.endsWith('.png')) {
    const size = pngSize(file)
    if (!size || size[0] < min || size[0] !== size[1]) {
      problems.push(`${platform}.icon ${icon} must be a square PNG of at least ${min} px`)
    }
  }
}

if (config.npmRebuild !== false) {
  problems.push(
    'npmRebuild must be false: rebuilding node_modules for Electron replaces the Node build of ' +
      'better-sqlite3 that the tests and the CLI load',
  )
}
const native = (config.extraResources ?? []).find(
  (r) => typeof r === 'object' && r.to === 'electron-native',
)
if (!native) {
  problems.push(
    'extraResources must ship build/electron-native as electron-native (native-binding.ts)',
  )
} else if (!existsSync(join(ROOT, native.from, 'better_sqlite3.node'))) {
  notes.push(
    `${native.from}/better_sqlite3.node is not built yet: \`npm run build:electron-native\` ` +
      '(needs internet) must run before `npm run dist`',
  )
}
// getConfig normalizes `files` to [{ filter: [...] }]; accept both shapes.
const filePatterns = (config.files ?? []).flatMap((f) =>
  typeof f === 'string' ? [f] : [f.filter ?? []].flat(),
)
if (!filePatterns.includes('out/**')) problems.push('files must include out/**')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
if (pkg.main !== './out/main/index.js' && pkg.main !== 'out/main/index.js') {
  problems.push(`package.json main is ${pkg.main}; the packaged app starts out/main/index.js`)
}
if (!existsSync(join(ROOT, 'out/main/index.js'))) {
  notes.push('out/ is not built yet: `npm run dist` runs `electron-vite build` first')
}

// ------------------------------------------------------------------ optional packaging attempt

if (process.argv.includes('--pack')) {
  const outDir = mkdtempSync(join(tmpdir(), 'pacer-dist-check-'))
  const run = spawnSync(
    process.execPath,
    [
      require.resolve('electron-builder/cli.js'),
      '--linux',
      'dir',
      '--publish',
      'never',
      `-c.directories.output=${outDir}`,
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 15 * 60_000 },
  )
  rmSync(outDir, { recursive: true, force: true })
  const output = `${run.stdout}\n${run.stderr}`
  if (run.status === 0) {
    notes.push('--pack: `electron-builder --linux dir` packaged the app')
  } else if (/Invalid configuration|InvalidConfigurationError/.test(output)) {
    problems.push(`--pack: electron-builder rejected the configuration:\n${output.trim()}`)
  } else if (
    /packaging\s+platform=/.test(output) &&
    /ENOTFOUND|ECONNREFUSED|EAI_AGAIN|ETIMEDOUT|download/i.test(output)
  ) {
    notes.push(
      '--pack: packaging started and stopped at the Electron download (no internet here); ' +
        'the package itself was NOT built',
    )
  } else {
    problems.push(
      `--pack: electron-builder failed before packaging:\n${output.trim().slice(-2000)}`,
    )
  }
}

for (const note of notes) console.log(`check-dist-config: note: ${note}`)
if (problems.length > 0) {
  for (const problem of problems) console.error(`check-dist-config: ${problem}`)
  process.exit(1)
}
console.log(
  `check-dist-config: electron-builder.yml is valid against electron-builder ${builderVersion}'s ` +
    'schema (checked offline, without packaging)',
)
