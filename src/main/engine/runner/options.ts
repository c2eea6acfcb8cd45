import type { WriteScope } from '../db/step-writes'
import type { Ledger } from '../ledger/ledger'
import type { TaskQueue } from '../queue/queue'
import type { Scheduler } from '../pacing/scheduler'
import type { SpendBudget } from '../pacing/spend-budget'
import type { TeamCaps } from '../pacing/team-caps'
import type { ClaimStore, Clock, Provider, TeamClaimStore } from '../core/types'
import { directWrites } from '../db/step-writes'
import type { Driver, DriverTask } from './durable/effects'
import type { JournalParts } from './durable/effects-journal'

export interface RunnerOptions {
  queue: TaskQueue
  claims: ClaimStore
  /**
   * Team mode: the claims every machine on the team's store shares, taken before the local one
   * (team-claim.ts). @default null
   */
  team?: TeamClaimStore | null
  scheduler: Scheduler
  ledger: Ledger
  /**
   * The batches' spend caps: a call of a capped batch is sent only once its worst case is
   * reserved (spend-budget.ts). @default null (no caps are read)
   */
  budget?: SpendBudget | null
  /**
   * Team mode: the team's spend caps, reserved in the team store beside the database's
   * (team/caps.ts). @default null
   */
  teamCaps?: TeamCaps | null
  clock: Clock
  /** Resolves a task's provider id; undefined = unknown provider (the task fails, visibly). */
  provider: (id: string) => Provider | undefined
  /** Who this process is in claims, task leases and the ledger. */
  workerId: string
  /** Only these batches (the CLI runs its own); null = every running batch (the console). @default null */
  batchIds?: string[] | null
  /** Claim and task lease, renewed every third of it while the task runs. @default 30_000 */
  leaseMs?: number
  /**
   * One provider call's deadline: past it the call is aborted, ledgered as `timeout` and fed to
   * the controller as one. Changed later by Runner.setCallTimeout (the setting). @default 120_000
   */
  callTimeoutMs?: number
  /** Attempts per call for transient errors (5xx, network). @default 4 */
  maxAttempts?: number
  /** Calls per step that may time out before the task fails (1 retry). @default 2 */
  maxTimeoutAttempts?: number
  /** Retries per call for throttles (429/503/529) before the task fails visibly. @default 50 */
  maxThrottleRetries?: number
  /** A waiter re-checks its claim at least this often. @default 60_000 */
  waitTimeoutMs?: number
  /** Tasks picked beyond the scheduler's current concurrency, to keep the pipe full. @default 2 */
  prefetch?: number
  /** How often the queue is re-read for work other processes queued or left. @default 500 */
  pollMs?: number
  /**
   * The transaction scope the queue, claims and ledger write through (the engine's StepWrites):
   * committed before every provider call. @default one transaction per statement
   */
  writes?: WriteScope
  /**
   * What runs a task's execution, asked once per execution with the task as a driver sees it:
   * undefined (or no function) = the built-in multi-step loop (builtin-driver.ts). An agent
   * module's handler for the task's type goes here (agents/).
   */
  driverFor?: (task: DriverTask) => Driver | undefined
  /**
   * The call journal and the task logs (journal.ts, task-log.ts): every effect is journaled and a
   * rerun replays it. @default none: every call runs live, nothing is replayed
   */
  journal?: JournalParts | null
  /**
   * Team mode, `--retry-failed`: per batch id, its run (when it began). A failure the team's store
   * kept from before then (one this database never saw) is forgotten there and the task runs
   * again, as a failure kept here is forgotten at the start. @default none
   */
  retryFailedSince?: ReadonlyMap<string, RetryRun>
}

/** One `--retry-failed` run of a batch in team mode: when it began, what it forgot so far. */
export interface RetryRun {
  readonly since: number
  /** Fingerprints whose team failure this run forgot (once each). */
  readonly forgotten: Set<string>
}

/** The options with every default filled in. */
export type ResolvedRunnerOptions = Required<
  Omit<
    RunnerOptions,
    'batchIds' | 'driverFor' | 'journal' | 'team' | 'retryFailedSince' | 'budget' | 'teamCaps'
  >
> &
  Pick<RunnerOptions, 'driverFor'> & {
    batchIds: string[] | null
    journal: JournalParts | null
    team: TeamClaimStore | null
    budget: SpendBudget | null
    teamCaps: TeamCaps | null
    retryFailedSince: ReadonlyMap<string, RetryRun>
  }

/** Fills in the defaults; a lease too short to renew in time is a TypeError. */
export function resolveRunnerOptions(options: RunnerOptions): ResolvedRunnerOptions {
  const leaseMs = options.leaseMs ?? 30_000
  if (!Number.isInteger(leaseMs) || leaseMs < 100) {
    throw new TypeError(`leaseMs must be an integer ≥ 100, got ${String(options.leaseMs)}`)
  }
  checkCallTimeout(options.callTimeoutMs)
  return {
    ...options,
    batchIds: options.batchIds ?? null,
    journal: options.journal ?? null,
    team: options.team ?? null,
    budget: options.budget ?? null,
    teamCaps: options.teamCaps ?? null,
    retryFailedSince: options.retryFailedSince ?? new Map(),
    leaseMs,
    callTimeoutMs: options.callTimeoutMs ?? 120_000,
    maxAttempts: options.maxAttempts ?? 4,
    maxTimeoutAttempts: options.maxTimeoutAttempts ?? 2,
    maxThrottleRetries: options.maxThrottleRetries ?? 50,
    waitTimeoutMs: options.waitTimeoutMs ?? 60_000,
    prefetch: options.prefetch ?? 2,
    pollMs: options.pollMs ?? 500,
    writes: options.writes ?? directWrites,
  }
}

/** The longest call deadline: a day (setTimeout would overflow past ~24.8 days anyway). */
const MAX_CALL_TIMEOUT_MS = 86_400_000

/** A call deadline must be a whole number of ms from 1 to a day: a TypeError names the value. */
export function checkCallTimeout(ms: number | undefined): void {
  if (ms !== undefined && !(Number.isInteger(ms) && ms >= 1 && ms <= MAX_CALL_TIMEOUT_MS)) {
    throw new TypeError(
      `callTimeoutMs must be an integer from 1 to ${MAX_CALL_TIMEOUT_MS}, got ${String(ms)}`,
    )
  }
}
