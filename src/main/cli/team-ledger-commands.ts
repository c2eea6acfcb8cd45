// `pacer summary --store` and `pacer export --store`: the team's ledger, read from the team
// store's stream (every machine's rows, each once), in the formats of the local commands with
// the machine as a column.
import type { TeamLedgerView } from '../../shared/contract'
import type { TeamStore } from '../engine'
import { teamCsv, teamRollup } from '../engine'
import { cacheLine, rollupJson, SUMMARY_HEADERS, summaryRow } from './ledger-commands'
import { refuseDatabase, streamOut } from './stream-out'
import { connectTeamReader } from './team'
import { dbPathFrom, table, thousands } from './common'
import { say } from './terminal-text'

export async function withTeam<T>(
  opts: { db?: string; store: string | true },
  use: (team: TeamStore) => Promise<T>,
): Promise<T> {
  const team = await connectTeamReader(opts.store, dbPathFrom(opts.db))
  try {
    return await use(team)
  } finally {
    await team.close()
  }
}

/** `pacer summary --store`: the team's spend per task type, and per task type and machine. */
export function teamSummaryCommand(opts: {
  db?: string
  store: string | true
  json?: boolean
}): Promise<number> {
  return withTeam(opts, async (team) => {
    const view: Omit<TeamLedgerView, 'waiting'> = {
      store: team.address.display,
      ...(await teamRollup(team.ledger)),
    }
    if (opts.json) {
      say.out(
        `${JSON.stringify({
          byType: view.byType.map(rollupJson),
          totals: rollupJson(view.totals),
          byMachine: view.byMachine.map((m) => ({ machine: m.machine, ...rollupJson(m) })),
          machines: view.machines,
          rows: view.rows,
          store: view.store,
        })}\n`,
      )
      return 0
    }
    if (view.rows === 0) {
      say.out(
        `the team ledger at ${view.store} is empty: run a batch with pacer run FILE.jsonl --store ${view.store}\n`,
      )
      return 0
    }
    const [first, ...rest] = SUMMARY_HEADERS
    say.out(
      `team ledger at ${view.store}: ${thousands(view.rows)} row(s) from ${view.machines.length} machine(s) (${view.machines.join(', ')})\n` +
        `${table(SUMMARY_HEADERS, [
          ...view.byType.map(summaryRow),
          summaryRow({ ...view.totals, taskType: 'TOTAL' }),
        ])}\n${cacheLine(view.totals)}\nby machine:\n` +
        `${table(
          [first!, 'machine', ...rest],
          view.byMachine.map((m) => {
            const [type, ...cells] = summaryRow(m)
            return [type!, m.machine, ...cells]
          }),
        )}\n`,
    )
    return 0
  })
}

/** `pacer export --store`: the team's ledger as CSV, streamed page by page from the stream. */
export function teamExportCommand(opts: {
  db?: string
  store: string | true
  out: string
  kind: 'events' | 'summary'
}): Promise<number> {
  refuseDatabase(opts.out, dbPathFrom(opts.db))
  return withTeam(opts, async (team) => {
    const done = await streamOut(
      opts.out,
      (out) => teamCsv(team.ledger, opts.kind, out),
      dbPathFrom(opts.db),
    )
    const what = opts.kind === 'events' ? 'events' : 'summary (task type × machine)'
    if (done) say.err(`wrote ${done.rows} team ${what} row(s) to ${done.where}\n`)
    return 0
  })
}
