// What a batch is started with (a file's text, its defaults) and how its tasks are resolved by
// them: shared by the lifecycle (a whole file at once) and the stream (a file line by line).
import type { BatchSummary, LineError } from '../../../shared/contract'
import type { ParsedTask } from '../intake/batch-file'
import type { ForecastOptions } from '../intake/forecast'
import type { RequestParams } from '../core/types'
import type { BatchAgents } from '../agents/registry'
import { resolverFor, type ResolvedTask, type ResolveRules } from '../intake/task-resolver'
import type { EngineParts } from './parts'

export type { ResolvedTask }

/** The provider and model of tasks that name none (a `pacer run`'s --provider and --model). */
export interface TaskDefaults {
  provider?: string
  /** null: no default model, so a task on the default provider must name its own. */
  model?: string | null
  /** Request params for every task (`--max-tokens`, `--temperature`, `--params`); a line's win. */
  params?: RequestParams
  /** The agent module whose handlers run the tasks of its types (`--agents`). */
  agents?: BatchAgents
}

/** A batch file as `pacer run` starts it. */
export interface FileBatch {
  /** The file's text: with `defaults` and `audit`, what makes two runs "the same file". */
  content: string
  /** Where it was read from (the batch's source), and the name the batch is listed under. */
  source: string
  name: string
  /** Its tasks, resolved (`resolve`) with these `defaults`. */
  tasks: readonly ResolvedTask[]
  defaults: TaskDefaults
  audit: boolean
  /** Queue a new batch even when an interrupted one of the same file exists (`--new`). */
  fresh?: boolean
  /** Forget the stored failures of these tasks first, so they run again (`--retry-failed`). */
  retryFailed?: boolean
}

export interface StartedFile {
  batchId: string
  /** True: an interrupted batch of the same file was resumed instead of queuing a new one. */
  resumed: boolean
  /** Stored failures forgotten (`retryFailed`). */
  retried: number
  batch: BatchSummary
}

/** The rules a task is resolved by: this engine's providers, the run's defaults or the settings'. */
export function resolveRules(
  parts: Pick<EngineParts, 'providers' | 'settings'>,
  defaults?: TaskDefaults,
): ResolveRules {
  const current = parts.settings.get()
  const defaultProvider = defaults?.provider ?? current.defaultProvider
  const defaultModel =
    defaults?.model !== undefined
      ? defaults.model
      : defaultProvider === current.defaultProvider
        ? current.defaultModel
        : null
  return {
    providers: Object.keys(parts.providers),
    defaultProvider,
    defaultModel,
    params: defaults?.params,
    agent: defaults?.agents,
  }
}

/**
 * Resolves one task at a time (resolve() for a list, the streamed file for each line): its provider
 * and model, checked, and its claim identity. A problem is pushed to `errors`, never thrown.
 */
export function taskResolver(
  parts: Pick<EngineParts, 'providers' | 'settings'>,
  defaults?: TaskDefaults,
): (t: ParsedTask, errors: LineError[]) => ResolvedTask | null {
  return resolverFor(resolveRules(parts, defaults))
}

/**
 * How a forecast on this database is made: deduplicated unless audit mode (the batch's, else the
 * setting), the stored answers of its claims counted as reused, and the output assumption given.
 */
export function forecastOptions(
  parts: Pick<EngineParts, 'claims' | 'settings'>,
  audit: boolean | undefined,
  assumeOutputTokens: number | undefined,
): ForecastOptions {
  return {
    dedup: !(audit ?? parts.settings.get().audit),
    stored: (fp) => parts.claims.holdsResult(fp),
    ...(assumeOutputTokens === undefined ? {} : { outputTokensPerStep: assumeOutputTokens }),
  }
}
