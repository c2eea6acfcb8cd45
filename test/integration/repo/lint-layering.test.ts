/**
 * The layering lint rules bite: the project's own eslint.config.mjs, run through ESLint's Node API
 * on one-line files placed (virtually) in each area, refuses each wrong import with
 * no-restricted-imports and lets the right ones through. One ESLint instance for every case.
 */
import { resolve } from 'node:path'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(__dirname, '../../..')
const eslint = new ESLint({ cwd: ROOT })

/** Lints `import ... from '<source>'` as if it were `file`; returns the layering messages. */
async function restrictedImports(file: string, source: string): Promise<string[]> {
  const code = `import * as probe from '${source}'\n\nexport const probed = probe\n`
  const [result] = await eslint.lintText(code, { filePath: resolve(ROOT, file) })
  if (!result) throw new Error(`ESLint returned no result for ${file}`)
  // A file outside the config (ignored, or a parse error) would pass every case below unseen.
  expect(result.messages.filter((m) => m.fatal === true || m.ruleId === null)).toEqual([])
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message)
}

const ENGINE = 'src/main/engine/probe.ts'
const TRANSPORT = 'src/main/transport/probe.ts'
const SERVER = 'src/main/server/probe.ts'
const DESKTOP = 'src/main/desktop/probe.ts'
const CLI = 'src/main/cli/probe.ts'
const SHARED = 'src/shared/probe.ts'
const PRELOAD = 'src/preload/probe.ts'
const RENDERER = 'src/renderer/src/features/queue/probe.ts'

describe('layering lint rules', () => {
  it.each([
    ['engine', '../server/http-server', ENGINE, 'the engine'],
    ['engine', '../transport/commands', ENGINE, 'the engine'],
    ['engine', '../desktop/secrets', ENGINE, 'the engine'],
    ['engine', '../../cli/common', ENGINE, 'the engine'],
    ['engine', 'electron', ENGINE, 'electron'],
    ['shared', '../main/engine/errors', SHARED, 'shared'],
    ['shared', '../renderer/src/store', SHARED, 'shared'],
    ['shared', 'electron', SHARED, 'electron'],
    ['desktop', '../server/responses', DESKTOP, 'desktop/ and server/'],
    ['desktop', '../server', DESKTOP, 'desktop/ and server/'],
    ['server', '../desktop/ipc', SERVER, 'desktop/ and server/'],
    ['server', 'electron', SERVER, 'electron'],
    ['transport', '../server/responses', TRANSPORT, 'transport/'],
    ['transport', '../desktop/ipc', TRANSPORT, 'transport/'],
    ['transport', 'electron', TRANSPORT, 'electron'],
    ['cli', '../desktop/secrets', CLI, 'the cli'],
    ['preload', '../main/transport/commands', PRELOAD, 'the preload'],
    ['renderer', 'node:fs', RENDERER, 'Node built-ins'],
    ['renderer', 'fs', RENDERER, 'Node built-ins'],
    ['renderer', '../../../../main/engine/errors', RENDERER, 'the renderer'],
    ['renderer', '../../../../preload/index', RENDERER, 'the renderer'],
    ['renderer', 'electron', RENDERER, 'electron'],
  ])('%s may not import %s', async (_area, source, file, says) => {
    const messages = await restrictedImports(file, source)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toContain(says)
  })

  it.each([
    ['engine', '../../shared/contract', ENGINE],
    ['transport', '../engine/errors', TRANSPORT],
    ['server', '../transport/commands', SERVER],
    ['server', '../engine/errors', SERVER],
    ['desktop', '../transport/security-headers', DESKTOP],
    ['desktop', '../engine/engine', DESKTOP],
    ['desktop', 'electron', DESKTOP],
    ['cli', '../server', CLI],
    ['preload', '../shared/client', PRELOAD],
    ['preload', 'electron', PRELOAD],
    ['renderer', '../../../../shared/reply', RENDERER],
    ['renderer', '../../store', RENDERER],
  ])('%s may import %s', async (_area, source, file) => {
    expect(await restrictedImports(file, source)).toEqual([])
  })
})
