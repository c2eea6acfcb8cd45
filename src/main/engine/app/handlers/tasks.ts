import type { CommandHandlers, LineError } from '../../../../shared/contract'
import type { ParsedTask } from '../../intake/batch-file'
import { validateTask } from '../../intake/batch-file'
import { EngineError } from '../../core/errors'
import type { BatchApiRuns } from '../batch-api-runs'
import type { BatchLifecycle } from '../batch-lifecycle'
import type { EngineParts } from '../parts'

type TaskHandlers = Pick<CommandHandlers, 'tasks:enqueue' | 'tasks:list' | 'tasks:retry'>

/** The console's task commands: queue tasks as a batch, list them, retry the failed ones. */
export function taskHandlers(
  parts: EngineParts,
  batches: BatchLifecycle,
  batchApi: BatchApiRuns | null,
): TaskHandlers {
  const { clock, queue, settings } = parts
  return {
    'tasks:enqueue': (input) => {
      const errors: LineError[] = []
      const parsed = input.tasks
        .map((t, i) => validateTask(t, i + 1, errors))
        .filter((t): t is ParsedTask => t !== null)
      // Tasks come as an array here, not as lines of a file: name the bad one by its index.
      const fieldOf = (e: LineError) => `tasks[${e.line - 1}]${e.field ? `.${e.field}` : ''}`
      throwFirst(errors, fieldOf)
      const resolved = batches.resolve(parsed, input.params ? { params: input.params } : undefined)
      throwFirst(resolved.errors, fieldOf)
      const audit = input.audit ?? settings.get().audit
      const name = input.name ?? `console ${new Date(clock.now()).toISOString()}`
      const batchId = batches.enqueue(resolved.tasks, {
        name,
        source: 'console',
        sourceHash: null,
        audit,
      })
      return { batchId, enqueued: resolved.tasks.length }
    },
    'tasks:list': (input) => queue.listTasks(input),
    // A batch-API batch's tasks are retried through the batch API again, never live.
    'tasks:retry': async (input) => ({
      retried: (await batchApi?.retry(input)) ?? batches.retry(input),
    }),
  }
}

/** Throws the first problem as a command error naming its field. */
function throwFirst(errors: readonly LineError[], fieldOf: (e: LineError) => string): void {
  const first = errors[0]
  if (first) {
    const field = fieldOf(first)
    throw new EngineError('invalid_task', `${field}: ${first.message}`, field)
  }
}
