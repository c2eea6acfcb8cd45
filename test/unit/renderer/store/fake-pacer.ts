/**
 * The store under test, on a scripted engine: the real typed client (createPacerClient) over an
 * `invoke` that answers from per-channel scripts and records every call. Plain Node, no DOM.
 */
import { createPacerClient } from '../../../../src/shared/client'
import type {
  BatchSummary,
  CommandInput,
  CommandName,
  CommandResult,
  Reply,
  StatusCounts,
  TaskRow,
} from '../../../../src/shared/contract'
import { providePacer } from '../../../../src/renderer/src/store/api'
import { createConsoleStore } from '../../../../src/renderer/src/store'
import { TASK_STATUSES } from '../../../../src/renderer/src/store/task-windows'

type Answer<C extends CommandName> = (
  input: CommandInput<C>,
) => Reply<CommandResult<C>> | Promise<Reply<CommandResult<C>>>

export interface FakePacer {
  calls: { channel: CommandName; input: unknown }[]
  /** Answers `channel` with `answer` from now on (unscripted channels answer `not_scripted`). */
  on<C extends CommandName>(channel: C, answer: Answer<C>): void
  /** The inputs `channel` was called with, oldest first. */
  inputs<C extends CommandName>(channel: C): CommandInput<C>[]
}

/** A fresh store on a fresh scripted engine. */
export function storeOnFakePacer(): {
  store: ReturnType<typeof createConsoleStore>
  fake: FakePacer
} {
  const answers = new Map<CommandName, (input: unknown) => unknown>()
  const fake: FakePacer = {
    calls: [],
    on: (channel, answer) => void answers.set(channel, answer as (input: unknown) => unknown),
    inputs: <C extends CommandName>(channel: C) =>
      fake.calls.filter((c) => c.channel === channel).map((c) => c.input as CommandInput<C>),
  }
  const api = createPacerClient(
    'ipc',
    async (channel, input) => {
      fake.calls.push({ channel, input })
      const answer = answers.get(channel)
      if (!answer) return { ok: false, error: { code: 'not_scripted', message: channel } }
      return (await answer(input)) as Reply<unknown>
    },
    () => () => undefined,
  )
  providePacer(() => api)
  return { store: createConsoleStore(), fake }
}

export const ok = <T>(value: T): Reply<T> => ({ ok: true, value })
export const fail = (code: string, message = code): Reply<never> => ({
  ok: false,
  error: { code, message },
})

/** A reply the test hands over when it chooses, to see what the store does meanwhile. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

const NO_COUNTS = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as StatusCounts

export function batch(
  id: string,
  createdAt: number,
  counts: Partial<StatusCounts> = {},
): BatchSummary {
  const all = { ...NO_COUNTS, ...counts }
  return {
    id,
    name: `${id}.jsonl`,
    source: null,
    state: 'running',
    audit: false,
    createdAt,
    updatedAt: createdAt,
    total: Object.values(all).reduce((a, b) => a + b, 0),
    counts: all,
  }
}

export function task(id: number, patch: Partial<TaskRow> = {}): TaskRow {
  return {
    id,
    batchId: 'b1',
    seq: id,
    type: 't',
    fp: `fp${id}`,
    steps: 1,
    provider: 'sim',
    model: 'sim-1',
    status: 'queued',
    attempts: 0,
    error: null,
    createdAt: 0,
    startedAt: null,
    finishedAt: null,
    ...patch,
  }
}
