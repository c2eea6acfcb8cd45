// `pacer run FILE --agents MODULE`: the module loaded before anything else (a bad one is a usage
// error, nothing is queued), and the task types of the file it leaves to the built-in loop, said once.
import type { AgentModule, BatchAgents, Engine } from '../engine'
import { AgentModuleError, loadAgentModule } from '../engine'
import { UsageError } from './common'
import { say } from './terminal-text'

export interface LoadedAgents {
  module: AgentModule
  /** What the batch stores, and its tasks' fingerprints include. */
  batch: BatchAgents
}

/** Loads `--agents`; `--agent-version` pins the identity (as if the module exported `version`). */
export async function loadRunAgents(
  path: string | undefined,
  version: string | undefined,
): Promise<LoadedAgents | null> {
  if (path === undefined) {
    if (version !== undefined) throw new UsageError('--agent-version needs --agents MODULE')
    return null
  }
  if (version !== undefined && version.trim() === '') {
    throw new UsageError('--agent-version must not be empty')
  }
  let module: AgentModule
  try {
    module = await loadAgentModule(path)
  } catch (err) {
    if (err instanceof AgentModuleError) throw new UsageError(err.message)
    throw err
  }
  const { path: file, types, identity } = module
  const pinned = version === undefined ? identity : `version:${version}`
  return { module, batch: { path: file, types, identity: pinned, code: identity } }
}

/** Says once which task types of the batch the module does not handle. */
export function reportUnhandled(engine: Engine, batchId: string, agents: LoadedAgents): void {
  const unhandled = engine.agents.unhandled(batchId)
  if (unhandled.length === 0) return
  const list = unhandled.map((u) => `"${u.type}" (${u.tasks})`).join(', ')
  say.err(
    `pacer: ${agents.batch.path} handles no task of type ${list}: they run the built-in loop\n`,
  )
}
