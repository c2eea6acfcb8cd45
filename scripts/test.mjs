// `npm test`: typecheck, lint, the import-cycle check, format check, build (console and CLI), then every test layer (unit, integration, e2e) in one
// vitest run. Ends with a plain `N passed, N failed` line so a run that executed nothing cannot
// pass unnoticed.
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'

const results = '.vitest-results.json'
const steps = [
  ['typecheck', 'npm', ['run', '--silent', 'typecheck']],
  ['lint', 'npm', ['run', '--silent', 'lint']],
  ['cycles', 'node', ['scripts/check-cycles.mjs']],
  ['format', 'npx', ['prettier', '--check', '--log-level', 'warn', '.']],
  // The browser tests load the built console: build it from these sources, never a stale copy.
  ['build', 'npx', ['electron-vite', 'build', '--logLevel', 'warn']],
  // The CLI tests spawn bin/pacer.cjs, which runs the built CLI when it is current: test what a
  // user runs (the sources are tested too, whenever one is newer than the bundle).
  ['build-cli', 'node', ['scripts/build-cli.mjs']],
]
for (const [name, cmd, args] of steps) {
  console.log(`\n> ${name}`)
  const r = spawnSync(cmd, args, { stdio: 'inherit' })
  if (r.status !== 0) {
    console.log(`\n${name} failed`)
    console.log('0 passed, 1 failed')
    process.exit(1)
  }
}

rmSync(results, { force: true })
const extra = process.argv.slice(2)
const run = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${results}`,
    ...extra,
  ],
  { stdio: 'inherit' },
)
let passed
let failed
try {
  const json = JSON.parse(readFileSync(results, 'utf8'))
  passed = json.numPassedTests
  failed = json.numFailedTests + (json.numFailedTestSuites ?? 0)
} catch {
  passed = 0
  failed = 1
}
// A failure outside the tests (the guard over the user's Pacer folder, a crashed worker) counts.
if (run.status !== 0 && failed === 0) failed = 1
console.log(`\n${passed} passed, ${failed} failed`)
process.exit(run.status === 0 && failed === 0 && passed > 0 ? 0 : 1)
