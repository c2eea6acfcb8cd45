// Moves files and rewrites every relative import that names them, in both directions (the moved
// file's own imports and everyone else's). Used for the engine's move into folders by concern:
//   node scripts/codemod-move.mjs MAP_FILE [BASE]
// MAP_FILE holds one "old new" pair a line, paths relative to BASE (default: the repository root).
// Pure moves: nothing but import specifiers changes, so the typecheck and the same tests prove it.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const [mapFile, base = '.'] = process.argv.slice(2)
if (!mapFile) {
  console.error('usage: node scripts/codemod-move.mjs MAP_FILE [BASE]')
  process.exit(2)
}
const root = path.resolve('.')
const moves = new Map()
for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
  const [from, to] = line.trim().split(/\s+/)
  if (!from || from.startsWith('#')) continue
  moves.set(path.resolve(base, from), path.resolve(base, to))
}

const files = execFileSync('git', ['ls-files', '*.ts', '*.tsx', '*.mts', '*.mjs', '*.cjs'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter(Boolean)
  .map((f) => path.resolve(root, f))
const known = new Set(files)
for (const from of moves.keys()) {
  if (!known.has(from)) throw new Error(`not a tracked file: ${path.relative(root, from)}`)
}

const EXTENSIONS = ['', '.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json']
/** The file a relative specifier names, and how it was written (with an extension, as a folder). */
function resolveSpec(dir, spec) {
  const abs = path.resolve(dir, spec)
  for (const ext of EXTENSIONS) {
    if (known.has(abs + ext)) return { target: abs + ext, form: ext === '' ? 'exact' : 'bare' }
  }
  for (const ext of ['.ts', '.tsx']) {
    const index = path.join(abs, `index${ext}`)
    if (known.has(index)) return { target: index, form: 'folder' }
  }
  return null
}

function specFor(fromFile, target, form) {
  let rel = path.relative(path.dirname(fromFile), target).split(path.sep).join('/')
  if (form === 'bare') rel = rel.replace(/\.(ts|tsx|mts|cts|js)$/, '')
  if (form === 'folder') rel = path.dirname(rel) === '.' ? '.' : rel.replace(/\/index\.tsx?$/, '')
  if (!rel.startsWith('.')) rel = `./${rel}`
  return rel
}

const SPEC =
  /((?:\bfrom|\bimport|\bmock|\bdoMock|\bimportActual|\brequire)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*|\.{1,2})\2/g
const moved = (f) => moves.get(f) ?? f
let changedFiles = 0
for (const file of files) {
  const text = readFileSync(file, 'utf8')
  const dir = path.dirname(file)
  const dest = moved(file)
  const out = text.replace(SPEC, (whole, lead, quote, spec) => {
    const found = resolveSpec(dir, spec)
    if (!found) return whole
    const target = moved(found.target)
    if (target === found.target && dest === file) return whole
    let form = found.form
    // A folder whose index moved out of it is now named by its file.
    if (form === 'folder' && path.basename(target).replace(/\.tsx?$/, '') !== 'index') form = 'bare'
    return `${lead}${quote}${specFor(dest, target, form)}${quote}`
  })
  if (dest !== file) {
    mkdirSync(path.dirname(dest), { recursive: true })
    if (existsSync(dest)) throw new Error(`already there: ${path.relative(root, dest)}`)
    execFileSync('git', ['mv', path.relative(root, file), path.relative(root, dest)])
  }
  if (out !== text || dest !== file) {
    writeFileSync(dest, out)
    changedFiles++
  }
}
console.log(`${moves.size} files moved, ${changedFiles} files written`)
