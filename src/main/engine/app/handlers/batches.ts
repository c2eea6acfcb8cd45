import type {
  AgentsView,
  CommandHandlers,
  ForecastView,
  LineError,
} from '../../../../shared/contract'
import { loadAgentModule, type AgentModule } from '../../agents/module'
import type { BatchAgents } from '../../agents/registry'
import { EngineError } from '../../core/errors'
import { formatFromName } from '../../../../shared/batch-format'
import { parseBatchFile } from '../../intake/batch-file'
import { forecastBatch } from '../../intake/forecast'
import { forecastOptions } from '../task-defaults'
import { capsForFile } from '../budgets'
import type { BatchLifecycle, ResolvedTask, TaskDefaults } from '../batch-lifecycle'
import type { RequestParams } from '../../core/types'
import type { EngineParts } from '../parts'
import type { BatchApiRuns } from '../batch-api-runs'
import { usdToMicros } from '../../../../shared/money'

type BatchHandlers = Pick<
  CommandHandlers,
  | 'batches:preview'
  | 'batches:import'
  | 'batches:list'
  | 'batches:pause'
  | 'batches:resume'
  | 'batches:cancel'
  | 'provider-batches:cancel'
>

/** The batch-wide request params and agent module a command carries, as the tasks' defaults. */
function defaultsOf(
  input: { params?: RequestParams },
  agents: BatchAgents | undefined,
): TaskDefaults | undefined {
  if (!input.params && !agents) return undefined
  return { params: input.params, agents }
}

/** The module a console's import names, loaded (an error names the `agents` field). */
async function agentsOf(
  parts: EngineParts,
  path: string | undefined,
): Promise<{ module: AgentModule; batch: BatchAgents } | undefined> {
  if (path === undefined) return undefined
  let module: AgentModule
  try {
    module = await loadAgentModule(path)
  } catch (err) {
    throw EngineError.from(err, 'agents')
  }
  parts.agents.remember(module)
  const { path: file, identity, types } = module
  return { module, batch: { path: file, identity, types, code: identity } }
}

function agentsView(agents: BatchAgents, tasks: readonly ResolvedTask[]): AgentsView {
  const unhandled = new Map<string, number>()
  for (const t of tasks) {
    if (!agents.types.includes(t.type)) unhandled.set(t.type, (unhandled.get(t.type) ?? 0) + 1)
  }
  return {
    path: agents.path,
    identity: agents.identity,
    types: agents.types,
    unhandled: [...unhandled].sort().map(([type, n]) => ({ type, tasks: n })),
  }
}

/** The console's batch commands: preview and import a file, list, pause, resume and cancel. */
export function batchHandlers(
  parts: EngineParts,
  batches: BatchLifecycle,
  batchApi: BatchApiRuns | null,
): BatchHandlers {
  const { queue } = parts
  const forecastOf = (
    tasks: readonly ResolvedTask[],
    input: { audit?: boolean; assumeOutputTokens?: number; budgetUsd?: number },
  ): ForecastView => {
    // Both prices, live and at the batch rate, for the dialog's choice.
    const { dedup: _dedup, ...view } = forecastBatch(tasks, parts.prices, {
      ...forecastOptions(parts, input.audit, input.assumeOutputTokens),
      caps: capsForFile(parts, microsOf(input.budgetUsd)),
      batchRates: true,
    })
    return view
  }
  const batchApiRefusal = (tasks: readonly ResolvedTask[]): string | null =>
    batchApi
      ? batchApi.refusal(tasks.map((t) => t.provider))
      : 'this process cannot start runs through the Batch API'
  return {
    'batches:preview': async (input) => {
      const agents = await agentsOf(parts, input.agents)
      const format = input.format ?? formatFromName(input.fileName)
      const parsed = parseBatchFile(input.content, format)
      const { tasks, errors } = batches.resolve(parsed.tasks, defaultsOf(input, agents?.batch))
      return {
        format,
        valid: tasks.length,
        errors: sortErrors([...parsed.errors, ...errors]),
        forecast: tasks.length ? forecastOf(tasks, input) : null,
        ...(agents ? { agents: agentsView(agents.batch, tasks) } : {}),
        batchApiRefusal: tasks.length ? batchApiRefusal(tasks) : null,
      }
    },
    'batches:import': async (input) => {
      const agents = await agentsOf(parts, input.agents)
      const format = input.format ?? formatFromName(input.fileName)
      const parsed = parseBatchFile(input.content, format)
      const defaults = defaultsOf(input, agents?.batch)
      const { tasks, errors: runErrors } = batches.resolve(parsed.tasks, defaults)
      const errors = sortErrors([...parsed.errors, ...runErrors])
      const skipped = new Set(errors.map((e) => e.line)).size
      if (tasks.length === 0 || (errors.length > 0 && !input.skipInvalid)) {
        return { batchId: null, enqueued: 0, skipped: 0, errors }
      }
      const audit = input.audit ?? parts.settings.get().audit
      const batch = { name: input.fileName, source: input.fileName, sourceHash: null, audit }
      const budget = microsOf(input.budgetUsd)
      if (input.batchApi) {
        if (!batchApi) throw new EngineError('batch_api_refused', batchApiRefusal(tasks)!)
        const batchId = batchApi.enqueue(tasks, batch, agents, budget)
        return { batchId, enqueued: tasks.length, skipped, errors }
      }
      const batchId = batches.enqueue(tasks, batch, agents?.batch, budget)
      return { batchId, enqueued: tasks.length, skipped, errors }
    },
    'batches:list': () => queue.listBatches(),
    'batches:pause': ({ batchId }) => {
      batches.get(batchId)
      batches.pause(batchId)
      return batches.get(batchId)
    },
    'batches:resume': ({ batchId }) => {
      batches.get(batchId)
      // A stopped batch-API batch resumes on a batch-API run: never live, at twice the price.
      if (batchApi?.resumes(batchId)) batchApi.resume(batchId)
      // Resumed from the console, a stopped `pacer run` batch becomes the consoles' to run.
      else batches.resume(batchId, { driver: null, fromPaused: true })
      return batches.get(batchId)
    },
    'batches:cancel': async ({ batchId }) => {
      batches.get(batchId)
      batches.cancel(batchId)
      // Its provider batches are cancelled at the vendor too, what finished kept and priced.
      await batchApi?.cancelRemote(batchId)
      return batches.get(batchId)
    },
    'provider-batches:cancel': ({ id }) => {
      if (!batchApi) {
        throw new EngineError('invalid_input', 'this process cannot cancel provider batches', 'id')
      }
      return batchApi.cancel(id)
    },
  }
}

const microsOf = (usd: number | undefined): number | undefined =>
  usd === undefined ? undefined : usdToMicros(usd)

function sortErrors(errors: LineError[]): LineError[] {
  return errors.sort((a, b) => a.line - b.line)
}
