// Reading a big batch file on a worker thread (batch-parse-worker.ts) while this thread inserts:
// on two cores, the read side (JSON, validation, canonical JSON, two hashes per line) no longer
// adds to the time a million lines take to queue.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import type { BatchFormat, LineError } from '../../../shared/contract'
import type { ParsedTask } from '../batch-file'
import type { ResolvedTask, ResolveRules } from '../task-resolver'

/** One line as the worker read it: its problems, its task, or a task that did not resolve. */
export type ParsedLine =
  | { line: number; errors: LineError[] }
  | { line: number; task: Omit<ResolvedTask, 'payload'> }
  | { line: number; unresolved: Omit<ParsedTask, 'payload'>; errors: LineError[] }

export type ParserMessage =
  | { kind: 'lines'; json: string; read: number }
  | { kind: 'done'; hash: string; read: number }
  | { kind: 'failed'; message: string }

const WORKER = path.join(__dirname, 'batch-parse-worker.ts')

/**
 * The file's lines, a chunk at a time, parsed on a worker thread; the generator returns the
 * file's source hash (its bytes, then `settings`). Null where no worker can run this source
 * (a bundled build): the caller reads the file itself.
 */
export function parseOnWorker(opts: {
  path: string
  format: BatchFormat
  rules: ResolveRules
  settings: string
}): AsyncGenerator<{ lines: ParsedLine[]; read: number }, string> | null {
  if (!existsSync(WORKER)) return null
  // The CLI runs from TypeScript through tsx: the worker registers it too.
  const code = `require('tsx/cjs/api').register(); require(${JSON.stringify(WORKER)})`
  return lines(new Worker(code, { eval: true, workerData: opts }))
}

async function* lines(
  worker: Worker,
): AsyncGenerator<{ lines: ParsedLine[]; read: number }, string> {
  const queue: ParserMessage[] = []
  let failure: Error | null = null
  let notify: (() => void) | null = null
  worker.on('message', (m: ParserMessage) => {
    queue.push(m)
    notify?.()
  })
  worker.on('error', (err) => {
    failure = err
    notify?.()
  })
  worker.on('exit', (code) => {
    failure ??= new Error(`the batch file reader stopped (exit code ${code})`)
    notify?.()
  })
  try {
    for (;;) {
      while (queue.length === 0) {
        if (failure) throw failure
        await new Promise<void>((resolve) => (notify = resolve))
        notify = null
      }
      const m = queue.shift() as ParserMessage
      if (m.kind === 'failed') throw new Error(m.message)
      if (m.kind === 'done') return m.hash
      yield { lines: JSON.parse(m.json) as ParsedLine[], read: m.read }
      // Taken: the worker may read one chunk further.
      worker.postMessage('more')
    }
  } finally {
    void worker.terminate()
  }
}
