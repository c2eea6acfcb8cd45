// `npm run screenshot`: the README's picture (docs/screenshot.png), made the way a user sees the
// console: the console built, `pacer demo` run on a database, `pacer serve` on it, and Debian's
// Chromium (or PACER_CHROMIUM) on the Spend view at 1440x900.
//
// The footer shows the database's path, so it goes where a reader expects one, never in a
// temporary folder: `--db PATH` (default: .screenshot/pacer.db in this checkout; replaced).
//   node scripts/screenshot.mjs [--db /srv/pacer/pacer.db] [--out docs/screenshot.png]
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name)
  return i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]) : fallback
}
const db = arg('--db', join(ROOT, '.screenshot', 'pacer.db'))
const out = arg('--out', join(ROOT, 'docs', 'screenshot.png'))
if (/(^|\/)(tmp|temp)(\/|$)|pacer-(e2e|test|demo)-/i.test(db)) {
  console.error(`screenshot: ${db} looks temporary, and the footer would show it: pass --db`)
  process.exit(2)
}
const CHROMIUM = process.env.PACER_CHROMIUM ?? '/usr/bin/chromium'
const pacer = join(ROOT, 'bin', 'pacer.cjs')

function step(command, args) {
  const r = spawnSync(command, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${r.status}`)
}

step('npx', ['electron-vite', 'build', '--logLevel', 'warn'])
mkdirSync(dirname(db), { recursive: true })
for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true })
step(process.execPath, [pacer, 'demo', '--db', db])

const serve = spawn(process.execPath, [pacer, 'serve', '--db', db, '--port', '0'], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'inherit'],
})
const url = await new Promise((done, fail) => {
  let text = ''
  serve.stdout.on('data', (chunk) => {
    text += chunk
    const m = /Pacer console: (\S+)/.exec(text)
    if (m) done(m[1])
  })
  serve.on('exit', (code) => fail(new Error(`pacer serve exited with ${code}`)))
})

let browser
try {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install chromium)`)
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  })
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } })
  await page.goto(url)
  await page.getByTestId('nav-spend').click()
  await page.getByTestId('spend-totals').waitFor()
  // The cost chart draws on a frame after its data arrives.
  await page.locator('.spend-view canvas, [data-testid="spend-view"] canvas').first().waitFor()
  await page.waitForLoadState('networkidle')
  await page.screenshot({ path: out })
  console.log(`screenshot: ${out} (database ${db})`)
} finally {
  await browser?.close()
  serve.kill('SIGINT')
}
