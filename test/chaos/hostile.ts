/**
 * The chaos run's hostile commands, beside the kills: `pacer export --out` aimed at the database
 * or its -wal while runs write to it (refused, exit 2, the ledger intact), `pacer run` with an
 * agent module that calls process.exit(0) or never finishes loading (never exit 0: the work is
 * not done), and `pacer run --store` on a team store that accepts and never answers (said in
 * seconds naming host:port, exit 3, never a hang).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runPacer } from '../helpers/cli'
import type { SilentServer } from '../helpers/silent-server'

/** What the hostile commands did: each must have been refused, none may have exited 0. */
export interface HostileTally {
  exports: number
  exportsRefused: number
  agents: number
  agentExitCodes: (number | null)[]
  stalls: number
  /** Runs on the stalled store that said so (exit 3, naming host:port) within STALL_BOUND_MS. */
  stallsSaid: number
  stallOutcomes: string[]
  stallActive: boolean
}

export function hostileTally(): HostileTally {
  return {
    exports: 0,
    exportsRefused: 0,
    agents: 0,
    agentExitCodes: [],
    stalls: 0,
    stallsSaid: 0,
    stallOutcomes: [],
    stallActive: false,
  }
}

/**
 * How long a run on a silent store may take to say so once it reached the store: its deadlines
 * are 5 s each (connect, command); the rest is a loaded machine. The process's start from source
 * under the chaos load (three runs, a console, faults) is not counted, its end is: see
 * STALL_END_BOUND_MS.
 */
export const STALL_BOUND_MS = 30_000
/** The whole run on a silent store, start to exit: a hang would never end. */
export const STALL_END_BOUND_MS = 180_000

/** `pacer export --out` at the database itself or its -wal: must be exit 2, nothing opened. */
export async function exportAtDatabase(
  dbPath: string,
  random: () => number,
  tally: HostileTally,
): Promise<void> {
  tally.exports++
  const out = random() < 0.5 ? dbPath : `${dbPath}-wal`
  const r = await runPacer(['export', '--db', dbPath, '--out', out])
  if (r.code === 2 && /would destroy the ledger/.test(r.stderr)) tally.exportsRefused++
}

const MODULES = {
  exit: 'process.exit(0)\nexport default { t: async () => "never" }\n',
  hang: 'await new Promise(() => {})\nexport default { t: async () => "never" }\n',
}

/**
 * `pacer run FILE --agents MODULE` with a module that exits or hangs at load, on the shared
 * database; not awaited by the fault loop (a hang may take the load deadline, 30 s).
 */
export function hostileAgentRun(
  dir: string,
  file: string,
  dbPath: string,
  random: () => number,
  tally: HostileTally,
): Promise<void> {
  tally.agents++
  const kind = random() < 0.5 ? 'exit' : 'hang'
  const module = join(dir, `hostile-${kind}-${tally.agents}.mjs`)
  writeFileSync(module, MODULES[kind])
  const args = ['run', file, '--db', dbPath, '--agents', module]
  return runPacer([...args, '--provider', 'openai-compatible', '--model', 'chaos']).then((r) => {
    tally.agentExitCodes.push(r.code)
  })
}

/**
 * `pacer run FILE --store redis://…` on a store that accepts the connection and never answers,
 * on the shared database while the other runs go on; not awaited by the fault loop.
 */
export function stalledStoreRun(
  file: string,
  dbPath: string,
  silent: SilentServer,
  tally: HostileTally,
): Promise<void> {
  // One at a time: the connection a run's deadline counts from must be its own.
  if (tally.stallActive) return Promise.resolve()
  tally.stallActive = true
  tally.stalls++
  const started = Date.now()
  const args = ['run', file, '--db', dbPath, '--provider', 'openai-compatible', '--model', 'chaos']
  args.push('--store', `redis://127.0.0.1:${silent.port}/0`)
  return runPacer(args).then((r) => {
    tally.stallActive = false
    const ended = Date.now()
    const reached = silent.acceptedAt.find((t) => t >= started)
    const said = new RegExp(`team store 127\\.0\\.0\\.1:${silent.port} not answering`)
    const ok =
      r.code === 3 &&
      said.test(r.stderr) &&
      reached !== undefined &&
      ended - reached < STALL_BOUND_MS &&
      ended - started < STALL_END_BOUND_MS
    if (ok) tally.stallsSaid++
    const since =
      reached === undefined
        ? 'never reached the store'
        : `${secs(ended - reached)} after reaching it`
    tally.stallOutcomes.push(`exit ${r.code}: ${secs(ended - started)} in all, ${since}`)
  })
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`
