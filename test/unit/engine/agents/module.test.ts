// The agent module loader on real files: ES modules and TypeScript, their identity, and the one
// clear error each kind of bad module gets.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { AgentModuleError, loadAgentModule } from '../../../../src/main/engine/agents/module'
import { tempDir } from '../../../helpers/cli'

function moduleFile(name: string, source: string): string {
  const path = join(tempDir('pacer-agents-'), name)
  writeFileSync(path, source)
  return path
}

async function loadError(path: string): Promise<string> {
  const err = await loadAgentModule(path).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(AgentModuleError)
  return (err as Error).message
}

describe('loadAgentModule', () => {
  it('loads an ES module: its handlers by type, identified by the hash of its file', async () => {
    const path = moduleFile(
      'agent.mjs',
      'export default { b: async () => 1, a: async (task) => task.payload }\n',
    )
    const m = await loadAgentModule(path)
    expect(m.path).toBe(path)
    expect(m.types).toEqual(['a', 'b'])
    expect(m.identity).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(await m.handlers.get('a')!({ payload: 7 } as never, {} as never)).toBe(7)
  })

  it('loads TypeScript (.ts and .mts), with imports of other TypeScript files', async () => {
    const dir = tempDir('pacer-agents-')
    writeFileSync(join(dir, 'helper.ts'), 'export const twice = (n: number): number => n * 2\n')
    writeFileSync(
      join(dir, 'agent.ts'),
      "import { twice } from './helper'\nexport default { double: async (task: { payload: number }) => twice(task.payload) }\n",
    )
    writeFileSync(
      join(dir, 'agent.mts'),
      "import { twice } from './helper.ts'\nexport const version: string = 'v2'\nexport default { double: async (task: { payload: number }) => twice(task.payload) }\n",
    )
    const ts = await loadAgentModule(join(dir, 'agent.ts'))
    expect(ts.types).toEqual(['double'])
    expect(await ts.handlers.get('double')!({ payload: 4 } as never, {} as never)).toBe(8)
    const mts = await loadAgentModule(join(dir, 'agent.mts'))
    expect(mts.identity).toBe('version:v2')
    expect(await mts.handlers.get('double')!({ payload: 5 } as never, {} as never)).toBe(10)
  })

  it('an exported version is the identity; otherwise a changed file is another identity', async () => {
    const path = moduleFile('agent.mjs', 'export default { a: async () => 1 }\n')
    const first = await loadAgentModule(path)
    expect((await loadAgentModule(path)).identity).toBe(first.identity)
    writeFileSync(path, 'export default { a: async () => 2 }\n')
    const changed = await loadAgentModule(path)
    expect(changed.identity).not.toBe(first.identity)
    // The changed code is what runs: the module is not served from the import cache.
    expect(await changed.handlers.get('a')!({} as never, {} as never)).toBe(2)
    writeFileSync(path, "export const version = 'r7'\nexport default { a: async () => 3 }\n")
    expect((await loadAgentModule(path)).identity).toBe('version:r7')
  })

  it('refuses a missing file, another extension, and a module that does not load', async () => {
    const dir = tempDir('pacer-agents-')
    expect(await loadError(join(dir, 'nope.mjs'))).toBe(
      `agent module ${join(dir, 'nope.mjs')}: no such file`,
    )
    expect(await loadError(moduleFile('agent.py', 'x = 1\n'))).toMatch(
      /agent\.py: not an ES module \(\.mjs, \.js\) or TypeScript file/,
    )
    expect(await loadError(moduleFile('broken.mjs', 'export default {\n'))).toMatch(
      /broken\.mjs: cannot load: /,
    )
    expect(await loadError(moduleFile('throws.mjs', "throw new Error('boom at load')\n"))).toMatch(
      /throws\.mjs: cannot load: boom at load/,
    )
  })

  it('names the export at fault: none, not an object, a handler that is not a function', async () => {
    expect(await loadError(moduleFile('none.mjs', 'export const a = 1\n'))).toMatch(
      /none\.mjs: no default export: export default \{ taskType: async \(task, ctx\) => result \}/,
    )
    expect(await loadError(moduleFile('fn.mjs', 'export default async () => 1\n'))).toMatch(
      /fn\.mjs: the default export must be an object mapping task types to handlers, got function/,
    )
    expect(
      await loadError(moduleFile('bad.mjs', "export default { ok: () => 1, research: 'x' }\n")),
    ).toMatch(
      /bad\.mjs: default export "research" must be a function \(task, ctx\) => result, got string/,
    )
    expect(await loadError(moduleFile('empty.mjs', 'export default {}\n'))).toMatch(
      /empty\.mjs: the default export maps no task type/,
    )
    expect(
      await loadError(moduleFile('v.mjs', 'export const version = 3\nexport default { a() {} }\n')),
    ).toMatch(/v\.mjs: export "version" must be a non-empty string, got number/)
  })

  it('refuses a TypeScript module without a default export the same way', async () => {
    expect(await loadError(moduleFile('none.ts', 'export const a: number = 1\n'))).toMatch(
      /none\.ts: no default export/,
    )
  })
})
