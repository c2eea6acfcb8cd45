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

const ENGINE = 'src/main/engine/app/probe.ts'
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
    ['engine db/', '../queue/workers', 'src/main/engine/db/probe.ts', 'db/ imports only'],
    ['engine core/', '../pacing/store', 'src/main/engine/core/probe.ts', 'core/ imports only'],
    ['engine pacing/', '../runner/context', 'src/main/engine/pacing/probe.ts', 'pacing/ imports'],
    ['engine claims/redis/', '../../team/connect', 'src/main/engine/claims/redis/p.ts', 'claims/'],
    ['engine team/ledger/', '../../app/parts', 'src/main/engine/team/ledger/p.ts', 'team/'],
    ['cli', '../engine/app/engine', CLI, 'public face'],
    ['desktop', '../engine/core/errors', DESKTOP, 'public face'],
    ['server', '../engine/db', SERVER, 'public face'],
    ['transport', '../engine/core/errors', TRANSPORT, 'public face'],
    ['engine', 'electron', ENGINE, 'electron'],
    ['shared', '../main/engine/core/errors', SHARED, 'shared'],
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
    ['renderer', '../../../../main/engine/core/errors', RENDERER, 'the renderer'],
    ['renderer', '../../../../preload/index', RENDERER, 'the renderer'],
    ['renderer', 'electron', RENDERER, 'electron'],
  ])('%s may not import %s', async (_area, source, file, says) => {
    const messages = await restrictedImports(file, source)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toContain(says)
  })

  it.each([
    ['engine', '../../shared/contract', ENGINE],
    ['engine pacing/', '../providers/classify', 'src/main/engine/pacing/probe.ts'],
    ['engine runner/', '../pacing/scheduler', 'src/main/engine/runner/probe.ts'],
    ['engine app/', '../team/open', ENGINE],
    ['engine claims/redis/', '../../redis/script-runner', 'src/main/engine/claims/redis/p.ts'],
    ['transport', '../engine', TRANSPORT],
    ['server', '../transport/commands', SERVER],
    ['server', '../engine', SERVER],
    ['desktop', '../transport/security-headers', DESKTOP],
    ['desktop', '../engine', DESKTOP],
    ['cli', '../engine', CLI],
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

/** Lints `code` as if it were `file`; returns the messages of `rule`. */
async function messagesOf(file: string, code: string, rule: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(ROOT, file) })
  if (!result) throw new Error(`ESLint returned no result for ${file}`)
  expect(result.messages.filter((m) => m.fatal === true || m.ruleId === null)).toEqual([])
  return result.messages.filter((m) => m.ruleId === rule).map((m) => m.message)
}

const lines = (n: number, line = 'x += 1') => Array.from({ length: n }, () => line).join('\n')

describe('the engine reads as a map', () => {
  it('its top level holds only folders, index.ts and constants.ts', async () => {
    const code = 'export const stray = 1\n'
    const rule = 'no-restricted-syntax'
    expect(await messagesOf('src/main/engine/stray.ts', code, rule)).toEqual([
      expect.stringContaining(
        "the engine's top level holds only folders, index.ts and constants.ts",
      ),
    ])
    expect(await messagesOf('src/main/engine/index.ts', code, rule)).toEqual([])
    expect(await messagesOf('src/main/engine/constants.ts', code, rule)).toEqual([])
    expect(await messagesOf('src/main/engine/core/stray.ts', code, rule)).toEqual([])
  })

  it('a file holds at most 400 lines, in src and in test', async () => {
    const at = (n: number) => `let x = 0\n${lines(n - 2)}\nexport { x }\n`
    for (const file of ['src/main/engine/core/long.ts', 'test/unit/long.test.ts']) {
      expect(await messagesOf(file, at(400), 'max-lines')).toEqual([])
      expect(await messagesOf(file, at(401), 'max-lines')).toHaveLength(1)
    }
  })

  it('a function holds at most 120 lines in src .ts files, not in JSX or tests', async () => {
    const fn = (n: number) =>
      `export function f(): number {\n  let x = 0\n${lines(n - 4)}\n  return x\n}\n`
    const rule = 'max-lines-per-function'
    expect(await messagesOf('src/main/cli/long.ts', fn(120), rule)).toEqual([])
    expect(await messagesOf('src/main/cli/long.ts', fn(121), rule)).toHaveLength(1)
    expect(await messagesOf('src/renderer/src/long.tsx', fn(121), rule)).toEqual([])
    expect(await messagesOf('test/unit/long.test.ts', fn(121), rule)).toEqual([])
  })
})
