// A user's agent module (`pacer run FILE --agents MODULE`, or chosen in the console's import): an
// ES module or TypeScript file whose default export maps task types to handlers. Loaded here once
// per content; what identifies its code (the `version` it exports, else its file's hash) becomes
// part of the fingerprint of every task it handles (fingerprint.ts), so changed code does not
// reuse the answers of the old code.
import { hash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { JsonValue } from '../core/types'

/** What a handler gets besides its task: the effects of its execution (see driver.ts). */
export interface AgentContext {
  chat(request: {
    messages: JsonValue[]
    model?: string
    provider?: string
    params?: { [key: string]: JsonValue }
  }): Promise<{
    text: string
    message: JsonValue | null
    usage: {
      inputTokens: number
      cachedInputTokens: number
      cacheWriteTokens: number
      outputTokens: number
    }
    finishReason: string | null
  }>
  step<T extends JsonValue>(name: string, fn: () => Promise<T> | T): Promise<T>
  log(message: string): void
  readonly task: AgentTask
  readonly signal: AbortSignal
}

/** The task as a handler sees it. */
export interface AgentTask {
  id: number
  batchId: string
  /** The line of the batch file. */
  line: number
  type: string
  payload: JsonValue
  key: string | null
  provider: string
  model: string
}

export type AgentHandler = (task: AgentTask, ctx: AgentContext) => unknown

/** What the engine keeps of a batch's module (stored with the batch, so a resume uses the same). */
export interface AgentSpec {
  /** Absolute path of the module file. */
  path: string
  /** `version:<the exported string>` or `sha256:<hex of the file>`: part of the fingerprints. */
  identity: string
  /** The task types its default export handles, sorted. */
  types: string[]
}

export interface AgentModule extends AgentSpec {
  readonly handlers: ReadonlyMap<string, AgentHandler>
}

/** A module that cannot be used, said in one line naming the module and the export. */
export class AgentModuleError extends Error {
  readonly code = 'agent_module'

  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`agent module ${path}: ${problem}`)
    this.name = 'AgentModuleError'
  }
}

const ES_EXTENSIONS = new Set(['.mjs', '.js'])
const TS_EXTENSIONS = new Set(['.ts', '.mts'])

/** Loads the module at `path` (relative to the working folder) and checks its default export. */
export async function loadAgentModule(path: string): Promise<AgentModule> {
  const file = resolve(path)
  const ext = extname(file)
  if (!ES_EXTENSIONS.has(ext) && !TS_EXTENSIONS.has(ext)) {
    throw new AgentModuleError(file, `not an ES module (.mjs, .js) or TypeScript file (.ts, .mts)`)
  }
  let source: Buffer
  try {
    // Only a regular file: a FIFO blocks the read until a writer comes, /dev/zero never ends.
    const kind = fileKind(await stat(file))
    if (kind !== null) throw new AgentModuleError(file, `is ${kind}, not a regular file`)
    source = await readFile(file)
  } catch (err) {
    if (err instanceof AgentModuleError) throw err
    const e = err as NodeJS.ErrnoException
    const why =
      e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a folder' : e.message
    throw new AgentModuleError(file, why)
  }
  const digest = hash('sha256', source, 'hex')
  const namespace = await importModule(file, TS_EXTENSIONS.has(ext), digest)
  const handlers = handlersOf(file, namespace.default)
  const version = namespace.version
  if (version !== undefined && (typeof version !== 'string' || version === '')) {
    throw new AgentModuleError(
      file,
      `export "version" must be a non-empty string, got ${typeof version}`,
    )
  }
  return {
    path: file,
    identity: version === undefined ? `sha256:${digest}` : `version:${version}`,
    types: [...handlers.keys()].sort(),
    handlers,
  }
}

/** How long an agent module may take to load (its top-level code, awaits included). */
const LOAD_TIMEOUT_MS = 30_000

/** The module's exports as an ES namespace: TypeScript compiled as CommonJS is unwrapped. */
async function importModule(
  file: string,
  typescript: boolean,
  digest: string,
): Promise<{ default?: unknown; version?: unknown }> {
  // The content's hash in the URL: a changed file is loaded again, an unchanged one from cache.
  const url = `${pathToFileURL(file).href}?pacer-agent=${digest}`
  let ns: Record<string, unknown>
  let timer: NodeJS.Timeout | undefined
  // A top-level await that never settles would hold the run forever: loading has a deadline
  // (unref'd: with nothing else to wait on, the process ends and the CLI's exit guard says so).
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AgentModuleError(
            file,
            `did not finish loading within ${LOAD_TIMEOUT_MS / 1000} s (a top-level await that never settles?)`,
          ),
        ),
      LOAD_TIMEOUT_MS,
    )
    timer.unref()
  })
  try {
    const load = async () => {
      if (typescript) {
        // The ESM build of tsx's API: its CommonJS build resolves its own loader wrongly when
        // required from code that tsx itself compiled (the `pacer` command).
        const { tsImport } = await import('tsx/esm/api')
        return (await tsImport(url, pathToFileURL(file).href)) as Record<string, unknown>
      }
      return (await import(url)) as Record<string, unknown>
    }
    ns = await Promise.race([load(), deadline])
  } catch (err) {
    if (err instanceof AgentModuleError) throw err
    throw new AgentModuleError(file, `cannot load: ${(err as Error).message.split('\n')[0]}`)
  } finally {
    clearTimeout(timer)
  }
  // A .ts file in a CommonJS package is compiled to CommonJS: Node then hands its exports object
  // over as `default` (esbuild marks it __esModule).
  const inner = ns.default as { __esModule?: unknown } | null | undefined
  if (inner !== null && typeof inner === 'object' && inner.__esModule === true) {
    return inner as { default?: unknown; version?: unknown }
  }
  return ns
}

function handlersOf(file: string, exported: unknown): Map<string, AgentHandler> {
  if (exported === undefined) {
    throw new AgentModuleError(
      file,
      'no default export: export default { taskType: async (task, ctx) => result }',
    )
  }
  if (exported === null || typeof exported !== 'object' || Array.isArray(exported)) {
    throw new AgentModuleError(
      file,
      `the default export must be an object mapping task types to handlers, got ${describe(exported)}`,
    )
  }
  const handlers = new Map<string, AgentHandler>()
  for (const [type, handler] of Object.entries(exported)) {
    if (typeof handler !== 'function') {
      throw new AgentModuleError(
        file,
        `default export "${type}" must be a function (task, ctx) => result, got ${describe(handler)}`,
      )
    }
    handlers.set(type, handler as AgentHandler)
  }
  if (handlers.size === 0) {
    throw new AgentModuleError(file, 'the default export maps no task type to a handler')
  }
  return handlers
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

/** What a path that is not a regular file is, for a message; null for a regular file. */
export function fileKind(st: Stats): string | null {
  if (st.isFile()) return null
  if (st.isDirectory()) return 'a folder'
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isSocket()) return 'a socket'
  return 'something else'
}
