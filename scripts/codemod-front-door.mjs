// Rewrites the deep engine imports of cli/, desktop/, server/ and transport/ into one import of
// src/main/engine/index.ts, and writes index.ts with exactly the names they use.
import ts from 'typescript'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve('.')
const engineDir = path.join(root, 'src/main/engine')
const files = execFileSync(
  'git',
  ['ls-files', 'src/main/cli', 'src/main/desktop', 'src/main/server', 'src/main/transport'],
  { encoding: 'utf8' },
)
  .split('\n')
  .filter((f) => /\.tsx?$/.test(f))
  .map((f) => path.join(root, f))

function resolve(dir, spec) {
  const abs = path.resolve(dir, spec)
  for (const c of [abs + '.ts', abs + '.tsx', path.join(abs, 'index.ts')])
    if (existsSync(c)) return c
  return null
}

/** module -> Map(name -> isType) */
const exportsByModule = new Map()
for (const file of files) {
  const text = readFileSync(file, 'utf8')
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const edits = []
  const values = new Map()
  const types = new Map()
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st)) continue
    const spec = st.moduleSpecifier.text
    if (!spec.startsWith('.')) continue
    const target = resolve(path.dirname(file), spec)
    if (!target || !target.startsWith(engineDir + path.sep)) continue
    if (target === path.join(engineDir, 'index.ts')) continue
    const clause = st.importClause
    if (!clause || clause.name || !clause.namedBindings || !ts.isNamedImports(clause.namedBindings))
      throw new Error(`unsupported import in ${file}: ${st.getText()}`)
    const declType = clause.isTypeOnly
    const mod = path
      .relative(engineDir, target)
      .replace(/\.ts$/, '')
      .replace(/\/index$/, '')
    if (!exportsByModule.has(mod)) exportsByModule.set(mod, new Map())
    for (const el of clause.namedBindings.elements) {
      const isType = declType || el.isTypeOnly
      const name = (el.propertyName ?? el.name).text
      const local = el.name.text
      const seen = exportsByModule.get(mod)
      seen.set(name, (seen.get(name) ?? true) && isType)
      const text = name === local ? name : `${name} as ${local}`
      ;(isType ? types : values).set(text, true)
    }
    edits.push(st)
  }
  if (edits.length === 0) continue
  let rel = path.relative(path.dirname(file), engineDir).split(path.sep).join('/')
  if (!rel.startsWith('.')) rel = `./${rel}`
  for (const t of [...types.keys()]) if (values.has(t)) types.delete(t)
  const lines = []
  if (types.size) lines.push(`import type { ${[...types.keys()].sort().join(', ')} } from '${rel}'`)
  if (values.size) lines.push(`import { ${[...values.keys()].sort().join(', ')} } from '${rel}'`)
  let out = text
  // Remove from the end so positions stay valid; the merged lines replace the first one.
  const sorted = [...edits].sort((a, b) => b.getStart() - a.getStart())
  for (const [i, st] of sorted.entries()) {
    const first = i === sorted.length - 1
    let end = st.getEnd()
    if (out[end] === '\n') end++
    out = out.slice(0, st.getStart()) + (first ? lines.join('\n') + '\n' : '') + out.slice(end)
  }
  writeFileSync(file, out)
}

const body = [...exportsByModule.entries()]
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([mod, names]) => {
    const vals = [...names]
      .filter(([, t]) => !t)
      .map(([n]) => n)
      .sort()
    const typs = [...names]
      .filter(([, t]) => t)
      .map(([n]) => n)
      .sort()
    const out = []
    if (vals.length) out.push(`export { ${vals.join(', ')} } from './${mod}'`)
    if (typs.length) out.push(`export type { ${typs.join(', ')} } from './${mod}'`)
    return out.join('\n')
  })
  .join('\n')
writeFileSync(
  path.join(engineDir, 'index.ts'),
  `// The engine's one public face: cli/, desktop/ and server/ import only this module (lint holds it).\n${body}\n`,
)
console.log([...exportsByModule.keys()].join(' '))
