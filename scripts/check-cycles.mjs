// No runtime import cycles anywhere in src/ (a cycle loads a module half-initialised, and the
// order it breaks in depends on which file is imported first). Type-only imports are erased
// before the check (dpdm's transform), so a type that points back is not a cycle; a dynamic
// import() is not one either, as it runs after both modules have loaded.
//   node scripts/check-cycles.mjs [DIR]   (default: src) — exits 1 listing each cycle found.
import path from 'node:path'
import { parseCircular, parseDependencyTree } from 'dpdm'

const dir = path.resolve(process.argv[2] ?? 'src')
const tree = await parseDependencyTree(['**/*.ts', '**/*.tsx'], {
  cwd: dir,
  context: dir,
  transform: true,
  skipDynamicImports: true,
  exclude: /node_modules|\.d\.ts$/,
  onProgress: () => {},
})
const cycles = parseCircular(tree, true)
if (cycles.length === 0) {
  console.log(`no import cycles in ${Object.keys(tree).length} files`)
} else {
  console.log(`${cycles.length} import cycle${cycles.length === 1 ? '' : 's'}:`)
  for (const c of cycles) console.log(`  ${[...c, c[0]].join(' -> ')}`)
  process.exit(1)
}
