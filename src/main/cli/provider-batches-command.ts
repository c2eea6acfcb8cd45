// `pacer provider-batches` and its `cancel`: declared here, run by provider-batches.ts (loaded
// only when the command runs, so `pacer --help` loads no engine).
import type { Command, Option } from 'commander'

export function addProviderBatchesCommand(
  program: Command,
  done: (exitCode: number) => void,
  dbOption: () => Option,
): void {
  const remote = program
    .command('provider-batches')
    .description(
      'the submissions sent with --batch-api: remote state, counts and waiting time, newest first',
    )
    .addOption(dbOption())
    .option('--json', 'print the list as JSON')
    .action(async (opts) => {
      const { providerBatchesCommand } = await import('./provider-batches')
      done(await providerBatchesCommand(opts))
    })
  remote
    .command('cancel')
    .description('ask the vendor to cancel a submission: requests already done are kept and priced')
    .argument('<id>', "the vendor's batch id, or Pacer's number for it")
    .addOption(dbOption())
    .option('--base-url <url>', "the server it was sent to, when not the vendor's own")
    .action(async (id: string, opts, cmd: Command) => {
      // --db given after `cancel` or before it (commander gives the parent's option to the parent).
      opts.db ??= (cmd.parent?.opts() as { db?: string } | undefined)?.db
      const { cancelProviderBatchCommand } = await import('./provider-batches')
      done(await cancelProviderBatchCommand(id, opts))
    })
}
