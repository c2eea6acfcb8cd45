// The runner's tests share this harness: a started runner over a fresh SQLite file, with the real
// claims, queue, ledger and scheduler, and a provider 'test' whose answers each test writes.
import { SqliteClaimStore } from '../../../../src/main/engine/claims/claims'
import { executionFingerprint, fingerprint } from '../../../../src/main/engine/core/fingerprint'
import { Ledger } from '../../../../src/main/engine/ledger/ledger'
import { Prices } from '../../../../src/main/engine/pricing/prices'
import { TaskQueue } from '../../../../src/main/engine/queue/queue'
import { Runner, type RunnerOptions } from '../../../../src/main/engine/runner'
import { Scheduler, type SchedulerOptions } from '../../../../src/main/engine/pacing/scheduler'
import { StepWrites } from '../../../../src/main/engine/db/step-writes'
import type {
  ProviderRequest,
  ProviderResponse,
  Usage,
} from '../../../../src/main/engine/core/types'
import { fakeClock } from '../../../helpers/clock'
import { openLedgerDb } from '../../../helpers/ledger-db'
import { until } from '../../../helpers/until'

export const USAGE: Usage = {
  inputTokens: 10,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 5,
}
export const answer = (text: string): ProviderResponse => ({
  status: 200,
  headers: {},
  text,
  usage: USAGE,
})

type Answer = (request: ProviderRequest, n: number) => ProviderResponse | Promise<ProviderResponse>

export interface TaskSpec {
  payload: unknown
  steps?: number
}

/** What a test opened besides its runners, closed with them. */
export const cleanups: (() => Promise<void>)[] = []

/** Stops every runner the test started and closes its database (each file's afterEach). */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) await cleanup()
}

/**
 * A started runner over a fresh database whose provider 'test' answers with `next`; `grouped`
 * writes through the engine's group commit (StepWrites) instead of one statement at a time.
 */
export function harness(
  next: Answer,
  options: Partial<RunnerOptions> = {},
  {
    grouped = false,
    ...schedulerOptions
  }: Omit<SchedulerOptions, 'clock'> & { grouped?: boolean } = {},
) {
  const file = openLedgerDb()
  const { db } = file
  const clock = fakeClock()
  const warnings: string[] = []
  const writes = grouped
    ? new StepWrites(db, { onError: (err) => warnings.push(err.message) })
    : undefined
  const claims = new SqliteClaimStore({ db, clock, writes })
  const ledger = new Ledger({ db, prices: new Prices(), clock, writes })
  const scheduler = new Scheduler({ clock, ...schedulerOptions })
  const queue = new TaskQueue(db, clock, writes)
  const requests: ProviderRequest[] = []
  const provider = {
    id: 'test',
    call: (request: ProviderRequest) => {
      requests.push(request)
      return Promise.resolve(next(request, requests.length))
    },
  }
  const runner = new Runner({
    queue,
    claims,
    scheduler,
    ledger,
    clock,
    workerId: 'worker-1',
    provider: (id) => (id === 'test' ? provider : undefined),
    // Sweeps of expired task leases would follow the fake clock: keep them out of the way.
    pollMs: 60_000,
    writes,
    ...options,
  })
  runner.on('warning', (w) => warnings.push(w))
  cleanups.push(async () => {
    await runner.stop({ graceMs: 0 })
    writes?.commit()
    scheduler.close()
    file.close()
  })

  const fpOf = ({ payload, steps = 1 }: TaskSpec) =>
    executionFingerprint(fingerprint('job', payload), { provider: 'test', model: 'm', steps })

  /** Enqueues the tasks as one batch, starts the runner, and waits until none is left to run. */
  async function run(tasks: TaskSpec[]): Promise<string> {
    const batchId = start(tasks)
    await until(() => {
      const c = queue.counts(batchId)
      return c.queued + c.running === 0
    })
    return batchId
  }

  /** Enqueues the tasks as one batch and starts the runner. */
  function start(tasks: TaskSpec[]): string {
    const batchId = queue.createBatch(
      { name: 'test', source: null, sourceHash: null, audit: false },
      tasks.map((t, seq) => ({
        seq,
        type: 'job',
        payloadJson: JSON.stringify(t.payload),
        fp: fpOf(t),
        key: null,
        steps: t.steps ?? 1,
        provider: 'test',
        model: 'm',
      })),
    )
    runner.start()
    return batchId
  }

  const tasks = (batchId: string) => queue.listTasks({ batchId, offset: 0, limit: 100 }).rows
  const outcomes = () => [...ledger.events()].map((r) => r.outcome)
  return {
    clock,
    claims,
    ledger,
    queue,
    runner,
    scheduler,
    requests,
    run,
    start,
    tasks,
    outcomes,
    fpOf,
    file,
    warnings,
  }
}
