/**
 * The chaos run's hostile commands, beside the kills: `pacer export --out` aimed at the database
 * or its -wal while runs write to it (refused, exit 2, the ledger intact), and `pacer run` with an
 * agent module that calls process.exit(0) or never finishes loading (never exit 0: the work is
 * not done).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runPacer } from '../helpers/cli'

/** What the hostile commands did: each must have been refused, none may have exited 0. */
export interface HostileTally {
  exports: number
  exportsRefused: number
  agents: number
  agentExitCodes: (number | null)[]
}

export function hostileTally(): HostileTally {
  return { exports: 0, exportsRefused: 0, agents: 0, agentExitCodes: [] }
}

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
