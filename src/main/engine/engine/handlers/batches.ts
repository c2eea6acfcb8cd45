import type { CommandHandlers, ForecastView, LineError } from '../../../../shared/contract'
import { formatFromName } from '../../../../shared/batch-format'
import { parseBatchFile } from '../../batch-file'
import { forecastBatch } from '../../forecast'
import type { BatchLifecycle, ResolvedTask, TaskDefaults } from '../batch-lifecycle'
import type { RequestParams } from '../../types'
import type { EngineParts } from '../parts'

type BatchHandlers = Pick<
  CommandHandlers,
  | 'batches:preview'
  | 'batches:import'
  | 'batches:list'
  | 'batches:pause'
  | 'batches:resume'
  | 'batches:cancel'
>

/** The batch-wide request params a command carries, as the tasks' defaults. */
function defaultsOf(input: { params?: RequestParams }): TaskDefaults | undefined {
  return input.params ? { params: input.params } : undefined
}

/** The console's batch commands: preview and import a file, list, pause, resume and cancel. */
export function batchHandlers(parts: EngineParts, batches: BatchLifecycle): BatchHandlers {
  const { prices, queue, settings } = parts
  const forecastOf = (tasks: readonly ResolvedTask[], audit?: boolean): ForecastView => {
    const dedup = !(audit ?? settings.get().audit)
    const { byType, total, unpricedTasks } = forecastBatch(tasks, prices, { dedup })
    return { byType, total, unpricedTasks }
  }
  return {
    'batches:preview': (input) => {
      const format = input.format ?? formatFromName(input.fileName)
      const parsed = parseBatchFile(input.content, format)
      const { tasks, errors } = batches.resolve(parsed.tasks, defaultsOf(input))
      return {
        format,
        valid: tasks.length,
        errors: sortErrors([...parsed.errors, ...errors]),
        forecast: tasks.length ? forecastOf(tasks, input.audit) : null,
      }
    },
    'batches:import': (input) => {
      const format = input.format ?? formatFromName(input.fileName)
      const parsed = parseBatchFile(input.content, format)
      const { tasks, errors: runErrors } = batches.resolve(parsed.tasks, defaultsOf(input))
      const errors = sortErrors([...parsed.errors, ...runErrors])
      const skipped = new Set(errors.map((e) => e.line)).size
      if (tasks.length === 0 || (errors.length > 0 && !input.skipInvalid)) {
        return { batchId: null, enqueued: 0, skipped: 0, errors }
      }
      const audit = input.audit ?? settings.get().audit
      const batchId = batches.enqueue(tasks, {
        name: input.fileName,
        source: input.fileName,
        sourceHash: null,
        audit,
      })
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
      // Resumed from the console, a stopped `pacer run` batch becomes the consoles' to run.
      batches.resume(batchId, { driver: null, fromPaused: true })
      return batches.get(batchId)
    },
    'batches:cancel': ({ batchId }) => {
      batches.get(batchId)
      batches.cancel(batchId)
      return batches.get(batchId)
    },
  }
}

function sortErrors(errors: LineError[]): LineError[] {
  return errors.sort((a, b) => a.line - b.line)
}
