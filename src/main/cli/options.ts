// The options several commands share (team mode's flags among them), apart from the commands:
// `pacer --help` builds every command's options and must not load the engine to do it.
import { type Command, InvalidArgumentError, Option } from 'commander'
import { SIM_REQUESTS_PER_MINUTE } from '../engine/constants'
import { CONTROLLER_KIND_NAMES } from '../../shared/contract/controller-kinds'

/** `--store` on the commands that run tasks. */
export const storeOption = () =>
  new Option(
    '--store <url>',
    'team mode: share the provider budget and the claims with other machines through this Redis (redis://HOST:PORT/DB, rediss:// for TLS; password in the URL or $PACER_REDIS_PASSWORD; default $PACER_STORE)',
  )

/** `--store [url]` on the commands that read the team's ledger. */
export const teamLedgerOption = () =>
  new Option(
    '--store [url]',
    "the team's ledger, from this Redis (redis://HOST:PORT/DB; without a URL: $PACER_STORE, else the teamStore setting if confirmed)",
  )

export const dbOption = () =>
  new Option('--db <path>', 'database file (default: the desktop app’s, or $PACER_DB)')

/** The concurrency controller for this process; the stored setting when not given. */
export const controllerOption = () =>
  new Option(
    '--controller <kind>',
    'concurrency controller for this process (default: the setting, adaptive unless changed)',
  ).choices(CONTROLLER_KIND_NAMES)

/** A base URL for this process; an environment key may go there (a URL in Settings gets none). */
export const baseUrlOption = () =>
  new Option(
    '--base-url <url>',
    "base URL of --provider for this process (over Settings' and $OPENAI_BASE_URL & co.); the provider's key from the environment goes there",
  )

/** One provider call's deadline, on every command that runs tasks. */
export const timeoutOption = () =>
  new Option(
    '--timeout <seconds>',
    'abort a provider call after this long: ledgered as a timeout, retried once (default: the setting, 120)',
  ).argParser(num(0.001, 86_400))

/** Off for this process only; commander sets `promptCache: true` when the flag is absent. */
export const promptCacheOption = () =>
  new Option(
    '--no-prompt-cache',
    'no Anthropic prompt caching in this process (default: the setting, on unless changed)',
  )

/** The simulated provider's knobs, on every command that runs tasks. */
export function withSimOptions(command: Command): Command {
  return command
    .option(
      '--sim-capacity <n>',
      'hidden concurrency capacity of the simulated provider',
      int(1),
      6,
    )
    .option('--sim-latency-scale <x>', 'multiply the simulated latencies', num(0), 1)
    .option(
      '--sim-rpm <n>',
      'requests per minute the simulated provider allows, 0 = no limit',
      int(0),
      SIM_REQUESTS_PER_MINUTE,
    )
}

export function int(min: number) {
  return (value: string) => {
    if (!/^-?\d+$/.test(value) || Number(value) < min) {
      throw new InvalidArgumentError(`expected an integer ≥ ${min}, got "${value}"`)
    }
    return Number(value)
  }
}

export function num(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string) => {
    const n = Number(value)
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `between ${min} and ${max}`
      throw new InvalidArgumentError(`expected a number ${range}, got "${value}"`)
    }
    return n
  }
}
