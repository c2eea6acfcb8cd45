import { Argument, Command, CommanderError, Option } from 'commander'
import {
  baseUrlOption,
  controllerOption,
  dbOption,
  int,
  num,
  promptCacheOption,
  storeOption,
  teamLedgerOption,
  timeoutOption,
  withSimOptions,
} from './options'
import { DatabaseError, UsageError, isStorageError } from './errors'
import { exportAction } from './export-action'
import { EXIT, EXIT_CODES_HELP } from './exit-codes'
import { say } from './terminal-text'
import { guardProcess } from './exit-guard'
import { PACER_VERSION } from '../engine/constants'
import { SHELLS } from './completion-shells'
import { addProviderBatchesCommand } from './provider-batches-command'
import { addBudgetsCommands } from './budgets-program'

// This module only defines the commands: each action imports its command's module when it runs,
// so `pacer --help` (and a typo) loads commander and these definitions, not the engine, zod,
// SQLite, the console server, Redis or tsx. The built CLI (scripts/build-cli.mjs) keeps those
// imports lazy; under tsx, bin/pacer.cjs registers the ESM hooks that import() of a .ts needs.

/** What a command's action reports: the process's exit code. */
export type Done = (exitCode: number) => void

/** Runs one `pacer` command; resolves to its exit code (exit-codes.ts). */
export async function main(argv: string[]): Promise<number> {
  const release = guardProcess()
  try {
    return await command(argv)
  } finally {
    release()
  }
}

async function command(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.done
  const program = buildProgram((code) => {
    exitCode = code
  })
  try {
    if (argv.length === 0) {
      program.outputHelp()
      return EXIT.usage
    }
    await program.parseAsync(argv, { from: 'user' })
    return exitCode
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every usage error is 2 (its message was already printed).
      return err.exitCode === 0 ? EXIT.done : EXIT.usage
    }
    if (err instanceof UsageError) {
      say.err(`pacer: ${err.message}\n`)
      return EXIT.usage
    }
    if (err instanceof DatabaseError) {
      say.err(`pacer: ${err.message}\n`)
      return EXIT.database
    }
    if (isStorageError(err)) {
      say.err(`pacer: database or disk error (${err.code}): ${err.message}\n`)
      return EXIT.database
    }
    throw err
  }
}

/** Every `pacer` command with its options; `done` receives the exit code of the one that runs. */
export function buildProgram(done: Done): Command {
  const program = new Command()
    .name('pacer')
    .description(
      'Run batches of LLM tasks once each, at the concurrency the provider allows, with every token on the ledger.',
    )
    .version(PACER_VERSION, '-v, --version')
    .showHelpAfterError('(run `pacer --help` for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => say.err(s) })
    .addHelpText('after', EXIT_CODES_HELP)
  addRunCommand(program, done)
  addLedgerCommands(program, done)
  addDatabaseCommands(program, done)
  addConsoleCommands(program, done)
  addBudgetsCommands(program, done, dbOption)
  addCompletionCommand(program, done)
  return program
}

function addRunCommand(program: Command, done: Done): void {
  const run = program
    .command('run')
    .description('run a batch file (JSONL or CSV): each distinct task once, results reused')
    .argument(
      '<file>',
      'batch file: one task per line, {"type","payload","steps"?,"key"?,"model"?,"params"?}',
    )
    .addOption(dbOption())
    .option('--provider <id>', 'provider for tasks that name none', 'sim')
    .option('--model <name>', 'model for tasks that name none')
    .addOption(baseUrlOption())
  withSimOptions(run)
    .addOption(controllerOption())
    .addOption(promptCacheOption())
    .option('--min-concurrency <n>', 'AIMD floor', int(1))
    .option('--max-concurrency <n>', 'AIMD ceiling', int(1))
    .option('--initial-concurrency <n>', 'AIMD starting limit', num(1))
    .option('--result-ttl <seconds>', 'reuse completed results this long (0 = forever)', int(0))
    .option('--lease <seconds>', 'claim lease, renewed while a task runs', num(0.1, 3600), 30)
    .addOption(timeoutOption())
    .addOption(storeOption())
    .option('--audit', 'no deduplication: run duplicates and price them (measure, then stop)')
    .option('--skip-invalid', 'queue the valid lines and report the invalid ones')
    .option('--retry-failed', 'run again tasks whose failure was kept as a result (after a fix)')
    .option(
      '--accept-truncated',
      'reuse answers the output cap cut short for their duplicates (default: run them again)',
    )
    .option('--new', 'start a new batch even if an interrupted run of this file can be resumed')
    .option(
      '--batch-api [auto]',
      'send the calls as provider batches (OpenAI Batch API, Anthropic Message Batches) at half price, answers within 24 h; journaled, so a rerun resumes polling and never submits twice. "auto": only when the forecast saving is above --batch-min-saving and no --deadline forbids it, live otherwise',
    )
    .option(
      '--batch-min-saving <usd>',
      'with --batch-api auto: the forecast saving above which the batch API is chosen (default 1)',
      num(0),
    )
    .option(
      '--deadline <when>',
      'when the answers are needed: a duration (90m, 2h, 1d) or an ISO time; inside the 24 h window, --batch-api is refused and auto runs live',
    )
    .option(
      '--budget <usd>',
      "the run's spend cap in USD, kept with the batch (a rerun's --budget replaces it): each call's worst case is reserved before it is sent; what does not fit is held (exit 5)",
      num(0),
    )
    .option(
      '--up-to-cap',
      'run a batch whose input alone already passes a cap (--budget or pacer budgets) until the cap holds the rest, instead of refusing to start it (exit 5)',
    )
    .option(
      '--otlp <url>',
      'send spans and GenAI metrics to this OpenTelemetry collector as the run goes (default: $OTEL_EXPORTER_OTLP_ENDPOINT)',
    )
    .option(
      '--otlp-content',
      'with --otlp: put prompts and answers on the spans (API keys and header values redacted)',
    )
    .option(
      '--max-tokens <n>',
      'cap each answer at n tokens, for tasks whose params set none (Anthropic default: 1024)',
      int(1),
    )
    .option('--temperature <x>', 'sampling temperature, for tasks whose params set none', num(0, 2))
    .option(
      '--params <json>',
      'request params for every task, e.g. \'{"top_p":0.9,"seed":7}\'; a line\'s own params win',
    )
    .option(
      '--agents <module>',
      'an ES module or TypeScript file whose default export maps task types to async (task, ctx) => result handlers',
    )
    .option(
      '--agent-version <id>',
      "the agents' identity in the fingerprints (default: the module's exported version, else its file's hash): keep it to reuse results across code changes",
    )
    .option('--json', 'print one JSON object with the totals and failures at the end')
    .action(async (file: string, opts) => {
      const { runCommand } = await import('./run')
      done(await runCommand(file, opts))
    })
}

function addLedgerCommands(program: Command, done: Done): void {
  program
    .command('summary')
    .description(
      'spend per task type: runs, executed, reused, duplicates, tokens, cost, saved, wasted',
    )
    .addOption(dbOption())
    .addOption(teamLedgerOption())
    .option('--json', 'print {"byType": [...], "totals": {...}} (with --store: and "byMachine")')
    .action(async (opts) => {
      if (opts.store) {
        const { teamSummaryCommand } = await import('./team-ledger-commands')
        done(await teamSummaryCommand(opts))
      } else {
        const { summaryCommand } = await import('./ledger-commands')
        done(await summaryCommand(opts))
      }
    })

  program
    .command('batches')
    .description('the batches on the ledger: state and task counts, newest first')
    .addOption(dbOption())
    .option('--json', 'print the list as JSON')
    .action(async (opts) => {
      const { batchesCommand } = await import('./ledger-commands')
      done(await batchesCommand(opts))
    })

  addProviderBatchesCommand(program, done, dbOption)

  program
    .command('export')
    .description(
      'export the ledger as CSV (streamed; formula-injection safe), or a batch as an OpenTelemetry trace',
    )
    .option('--out <file>', 'CSV file to write ("-" for stdout)')
    .option(
      '--otlp <url>',
      'send a finished batch as OTLP spans and GenAI metrics to this collector endpoint (…/v1/traces, …/v1/metrics are added); headers from OTEL_EXPORTER_OTLP_HEADERS',
    )
    .option(
      '--batch <id>',
      'with --otlp: the batch (default: the latest finished; see pacer batches)',
    )
    .option('--json', 'with --otlp: print what was sent as JSON')
    .option(
      '--otlp-content',
      'with --otlp: put prompts and answers on the spans (API keys and header values redacted)',
    )
    .addOption(dbOption())
    .addOption(
      new Option('--kind <kind>', 'one row per call, or per task type')
        .choices(['events', 'summary'])
        .default('events'),
    )
    .addOption(teamLedgerOption())
    .action(async (opts) => {
      done(await exportAction(opts))
    })

  program
    .command('results')
    .description('the answers: one record per task, in input order (streamed; a running batch too)')
    .addOption(dbOption())
    .option('--batch <id>', 'the batch (default: the latest; see pacer batches)')
    .option('--all', 'every batch, oldest first')
    .option('--out <file>', 'file to write ("-" or none: stdout)', '-')
    .addOption(
      new Option('--format <format>', 'one JSON object per line, or CSV with a header')
        .choices(['jsonl', 'csv'])
        .default('jsonl'),
    )
    .option('--raw', "CSV: add the provider's raw message as a JSON column (JSONL always has it)")
    .action(async (opts) => {
      const { resultsCommand } = await import('./results')
      done(await resultsCommand(opts))
    })
}

function addDatabaseCommands(program: Command, done: Done): void {
  program
    .command('check')
    .description("run SQLite's integrity check on the database (read only); exit 3 if damaged")
    .addOption(dbOption())
    .option('--json', 'one JSON object: dbPath, ok, problems')
    .action(async (opts) => {
      const { checkCommand } = await import('./db-commands')
      done(checkCommand(opts))
    })

  program
    .command('backup')
    .description('a consistent copy of the database, made while runs go on (SQLite online backup)')
    .requiredOption('--out <file>', 'the copy to write (must not exist)')
    .addOption(dbOption())
    .action(async (opts) => {
      const { backupCommand } = await import('./db-commands')
      done(await backupCommand(opts))
    })

  program
    .command('prices')
    .description(
      'the price table (dated and sourced per entry), or what a call to MODEL would cost',
    )
    .argument('[model]', 'a model id: its aliases and dated snapshots resolve to their entry')
    .option('--db <path>', 'also the price overrides stored in this database (Settings)')
    .option('--provider <id>', 'the provider of MODEL (default: the first family that prices it)')
    .option('--input-tokens <n>', 'input tokens of the call, cached ones included', int(0))
    .option('--cached-tokens <n>', 'of them, read from a prompt cache', int(0))
    .option('--cache-write-tokens <n>', 'of them, written to a prompt cache', int(0))
    .option('--output-tokens <n>', 'output tokens of the call', int(0))
    .option('--json', 'print the table, or the price and cost, as JSON')
    .action(async (model: string | undefined, opts) => {
      const { pricesCommand } = await import('./prices')
      done(await pricesCommand(model, opts))
    })

  program
    .command('forecast')
    .description('tokens and cost of a batch file before running it')
    .argument('<file>', 'batch file (JSONL or CSV)')
    .addOption(dbOption())
    .option('--audit', 'forecast without deduplication')
    .option(
      '--assume-output-tokens <n>',
      'output tokens each step answers (default: the simulated answer on sim, the prompt size elsewhere)',
      int(0),
    )
    .option(
      '--budget <usd>',
      "weigh the batch against this run's cap too (pacer run --budget), beside the caps kept in the database",
      num(0),
    )
    .option('--json', 'print the forecast as JSON')
    .action(async (file: string, opts) => {
      const { forecastCommand } = await import('./forecast')
      done(await forecastCommand(file, opts))
    })
}

function addConsoleCommands(program: Command, done: Done): void {
  const serve = program
    .command('serve')
    .description('open the console in a browser: the same engine over loopback HTTP')
    .addOption(dbOption())
    .option('--port <n>', 'port (0 = any free one)', int(0), 0)
    .option(
      '--host <address>',
      'address to listen on (default 127.0.0.1); one other than loopback needs --allow-remote',
    )
    .option(
      '--allow-remote',
      'allow a --host other machines can reach: every request then needs the session token',
    )
    .option('--open', 'open the console in the default browser')
    .addOption(controllerOption())
    .option('--provider <id>', 'the provider --base-url is for')
    .addOption(baseUrlOption())
    .addOption(timeoutOption())
    .addOption(promptCacheOption())
    .addOption(storeOption())
    .option(
      '--otlp <url>',
      'send the spans and GenAI metrics of the batches the console runs to this OpenTelemetry collector (default: $OTEL_EXPORTER_OTLP_ENDPOINT, else Settings → Observability)',
    )
  withSimOptions(serve).action(async (opts) => {
    const { serveCommand } = await import('./serve')
    done(await serveCommand(opts))
  })

  program
    .command('demo')
    .description(
      'run the bundled example batch on the simulated provider, on the default database, and print the summary',
    )
    .addOption(dbOption())
    .action(async (opts) => {
      const { demoCommand } = await import('./demo')
      done(await demoCommand(opts))
    })
}

function addCompletionCommand(program: Command, done: Done): void {
  program
    .command('install-path')
    .description(
      'put pacer on your PATH: a link in ~/.local/bin (Linux, macOS), pacer.cmd on Windows',
    )
    .action(async () => {
      const { installPathCommand } = await import('./install-path')
      done(installPathCommand())
    })
  program
    .command('completion')
    .description('print a completion script: source <(pacer completion bash), see docs/cli.md')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .action(async (shell: (typeof SHELLS)[number]) => {
      const { completionScript } = await import('./completion')
      say.out(completionScript(program, shell))
      done(EXIT.done)
    })
}
