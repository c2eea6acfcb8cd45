/**
 * The console's typed client of the contract, as `window.pacer`. Named functions only; each
 * transport (Electron preload, browser HTTP) supplies `invoke` and `subscribe` and gets the same
 * API, so a renamed command fails to compile on every side.
 */
import type {
  CommandInput,
  CommandName,
  CommandResult,
  EventName,
  EventPayloads,
  Reply,
} from './contract'

const API_METHODS = {
  enqueueTasks: 'tasks:enqueue',
  previewBatch: 'batches:preview',
  importBatch: 'batches:import',
  listBatches: 'batches:list',
  pauseBatch: 'batches:pause',
  resumeBatch: 'batches:resume',
  cancelBatch: 'batches:cancel',
  cancelProviderBatch: 'provider-batches:cancel',
  listTasks: 'tasks:list',
  retryTasks: 'tasks:retry',
  getTask: 'tasks:get',
  exportResults: 'results:export',
  getScheduler: 'scheduler:get',
  getSchedulerHistory: 'scheduler:history',
  setScheduler: 'scheduler:set',
  resumePartition: 'scheduler:resume',
  ledgerRollup: 'ledger:rollup',
  ledgerOverTime: 'ledger:over-time',
  exportLedger: 'ledger:export',
  teamLedger: 'ledger:team',
  listBudgets: 'budgets:list',
  setBudget: 'budgets:set',
  removeBudget: 'budgets:remove',
  getSettings: 'settings:get',
  setSettings: 'settings:set',
  setSecret: 'secrets:set',
  setOtlpHeaders: 'otlp:headers',
  testOtlp: 'otlp:test',
  joinTeam: 'team:join',
} as const satisfies Record<string, CommandName>

type Methods = typeof API_METHODS

const EVENT_METHODS = {
  onTasksChanged: 'tasks:changed',
  onSchedulerChanged: 'scheduler:changed',
  onLedgerChanged: 'ledger:changed',
  onTeamChanged: 'team:changed',
} as const satisfies Record<string, EventName>

type EventMethods = typeof EVENT_METHODS

export type PacerApi = {
  readonly [M in keyof Methods]: (
    input: CommandInput<Methods[M]>,
  ) => Promise<Reply<CommandResult<Methods[M]>>>
} & {
  /** Each returns an unsubscribe function. */
  readonly [E in keyof EventMethods]: (
    listener: (payload: EventPayloads[EventMethods[E]]) => void,
  ) => () => void
} & {
  /** Which transport this client speaks: Electron IPC or loopback HTTP. */
  readonly transport: 'ipc' | 'http'
  /**
   * The path on disk of a file the operator picked (desktop only: Electron's webUtils). A browser
   * never tells a page where a file lives, so `pacer serve`'s console has no such function.
   */
  readonly pathForFile?: (file: Blob) => string
}

export type Invoke = (channel: CommandName, input: unknown) => Promise<Reply<unknown>>
export type Subscribe = (event: EventName, listener: (payload: unknown) => void) => () => void

/** Builds the named-function client from a transport's invoke and subscribe. */
export function createPacerClient(
  transport: 'ipc' | 'http',
  invoke: Invoke,
  subscribe: Subscribe,
): PacerApi {
  const api: Record<string, unknown> = { transport }
  for (const [method, channel] of Object.entries(API_METHODS)) {
    api[method] = (input: unknown) => invoke(channel, input ?? {})
  }
  for (const [method, event] of Object.entries(EVENT_METHODS)) {
    api[method] = (listener: (payload: unknown) => void) => subscribe(event, listener)
  }
  return Object.freeze(api) as unknown as PacerApi
}
