// `pacer budgets`: its commands' definitions only; the actions (budgets.ts) load when they run.
import { Option, type Command } from 'commander'
import type { Done } from './index'

/** The dollar amount of a cap: a number ≥ 0. */
function usd(value: string): number {
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1e9) {
    throw new Error(`USD: expected a number between 0 and 1000000000, got "${value}"`)
  }
  return n
}

/** `--store [url]`: the team's caps instead of the database's. */
const teamCapsOption = () =>
  new Option(
    '--store [url]',
    "the team's caps, in this Redis: held across every machine on it (redis://HOST:PORT/DB; without a URL: $PACER_STORE, else the teamStore setting if confirmed)",
  )

/** Adds `pacer budgets [list]`, `pacer budgets set` and `pacer budgets remove`. */
export function addBudgetsCommands(program: Command, done: Done, dbOption: () => Option): void {
  const budgets = program
    .command('budgets')
    .description(
      'spend caps kept in the database (per task type, provider/model, day or month): list, set, remove',
    )
  budgets
    .command('list', { isDefault: true })
    .description("each cap with its period's spend, what calls in flight reserve, and what is left")
    .addOption(dbOption())
    .addOption(teamCapsOption())
    .option('--json', 'print the caps as JSON')
    .action(async (opts) => {
      const { budgetsListCommand } = await import('./budgets')
      done(await budgetsListCommand(opts))
    })
  budgets
    .command('set')
    .description(
      'add a cap, or change the one with the same scope and period; every process on the database holds to it',
    )
    .argument('<usd>', 'the cap in USD', usd)
    .option('--type <task-type>', 'only calls of this task type')
    .option('--model <provider/model>', 'only calls to this model (openai/gpt-4o-mini)')
    .option('--provider <id>', 'only calls to this provider (any model)')
    .addOption(new Option('--daily', 'per calendar day').conflicts('monthly'))
    .addOption(new Option('--monthly', 'per calendar month'))
    .addOption(
      new Option(
        '--local-time',
        "days and months of this machine's time zone (default UTC)",
      ).conflicts('zone'),
    )
    .option('--zone <iana>', 'days and months of this IANA time zone (Europe/Paris)')
    .addOption(dbOption())
    .addOption(teamCapsOption())
    .option('--json', 'print the caps after the change as JSON')
    .action(async (amount: number, opts) => {
      const { budgetsSetCommand } = await import('./budgets')
      done(await budgetsSetCommand(amount, opts))
    })
  budgets
    .command('remove')
    .description('remove a cap (its id from pacer budgets)')
    .argument('<id>', 'the cap id')
    .addOption(dbOption())
    .addOption(teamCapsOption())
    .action(async (id: string, opts) => {
      const { budgetsRemoveCommand } = await import('./budgets')
      done(await budgetsRemoveCommand(id, opts))
    })
}
