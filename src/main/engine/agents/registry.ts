// Which agent module drives which batch: stored with the batch (batches.agents, migration 11), so
// a resume in any process (a `pacer run` again, the console after a restart) runs the same module,
// and a module whose code changed since the batch was queued is refused, not run in its place.
import type Database from 'better-sqlite3'
import type { Driver, DriverTask } from '../runner/durable/effects'
import { agentDriver, AgentFailure } from './driver'
import { loadAgentModule, type AgentModule, type AgentSpec } from './module'

/** What a batch stores of its module: the spec, and the code identity it was queued with. */
export interface BatchAgents extends AgentSpec {
  /** The module's own identity when queued (its `version` or hash), even if `identity` is pinned. */
  code: string
}

export const AGENTS_SQL = {
  get: 'SELECT agents FROM batches WHERE id = ?',
  set: 'UPDATE batches SET agents = ? WHERE id = ?',
  types: `SELECT f.type AS type, COUNT(*) AS tasks FROM task_queue t
    JOIN fingerprints f ON f.id = t.fp_id
    WHERE t.batch = (SELECT key FROM batches WHERE id = ?) GROUP BY f.type ORDER BY f.type`,
} as const

/** The batches' agent modules, loaded once per content in this process. */
export class AgentRegistry {
  readonly #db: Database.Database
  #get: Database.Statement<[string], { agents: string | null }> | undefined
  #set: Database.Statement<[string, string]> | undefined
  readonly #batches = new Map<string, BatchAgents | null>()
  readonly #modules = new Map<string, Promise<AgentModule>>()
  readonly #load: (path: string) => Promise<AgentModule>

  constructor(
    db: Database.Database,
    load: (path: string) => Promise<AgentModule> = loadAgentModule,
  ) {
    // Prepared when first needed: a read-only engine on an older file never reads the column.
    this.#db = db
    this.#load = load
  }

  /** A module this process loaded already (the CLI's --agents): tasks need not load it again. */
  remember(module: AgentModule): void {
    this.#modules.set(moduleKey(module.path, module.identity), Promise.resolve(module))
  }

  /** Stores the batch's module; call it inside the transaction that queues the batch. */
  attach(batchId: string, agents: BatchAgents): void {
    ;(this.#set ??= this.#db.prepare(AGENTS_SQL.set)).run(JSON.stringify(agents), batchId)
    this.#batches.set(batchId, agents)
  }

  /** The batch's module as stored, or null. */
  of(batchId: string): BatchAgents | null {
    let agents = this.#batches.get(batchId)
    if (agents === undefined) {
      const row = (this.#get ??= this.#db.prepare(AGENTS_SQL.get)).get(batchId)
      agents = row?.agents ? (JSON.parse(row.agents) as BatchAgents) : null
      this.#batches.set(batchId, agents)
    }
    return agents
  }

  /** The batch's task types its module does not handle (they run the built-in loop), with counts. */
  unhandled(batchId: string): { type: string; tasks: number }[] {
    const agents = this.of(batchId)
    if (!agents) return []
    const rows = this.#db.prepare(AGENTS_SQL.types).all(batchId) as {
      type: string
      tasks: number
    }[]
    return rows.filter((r) => !agents.types.includes(r.type))
  }

  /** The handler of the task's batch's module for its type; undefined: the built-in loop. */
  driverFor(task: Pick<DriverTask, 'batchId' | 'type'>): Driver | undefined {
    const agents = this.of(task.batchId)
    if (!agents || !agents.types.includes(task.type)) return undefined
    return async (t, effects) => {
      const module = await this.#module(agents, task.batchId)
      const handler = module.handlers.get(t.type)
      if (!handler) {
        throw new AgentFailure(`agent module ${agents.path} no longer handles "${t.type}"`)
      }
      return agentDriver(t.type, handler)(t, effects)
    }
  }

  #module(agents: BatchAgents, batchId: string): Promise<AgentModule> {
    const key = moduleKey(agents.path, agents.code)
    let loading = this.#modules.get(key)
    if (!loading) {
      loading = this.#load(agents.path).then((m) => {
        if (m.identity !== agents.code) {
          throw new AgentFailure(
            `agent module ${agents.path} changed since batch ${batchId} was queued ` +
              `(${agents.code}, now ${m.identity}): queue the file again to run the new code`,
          )
        }
        return m
      })
      this.#modules.set(key, loading)
    }
    return loading
  }
}

function moduleKey(path: string, identity: string): string {
  return `${path}\n${identity}`
}
