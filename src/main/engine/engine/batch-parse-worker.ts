// The read side of `pacer run FILE` for a big file, on a thread of its own: rows read, validated,
// fingerprinted and resolved here while the main thread inserts the ones before them. Started by
// batch-parse.ts; posts each chunk's lines as one JSON string, and waits for the main thread to
// take a few before reading on (its memory stays a few chunks, however big the file).
import { createHash } from 'node:crypto'
import { parentPort, workerData } from 'node:worker_threads'
import type { BatchFormat, LineError } from '../../../shared/contract'
import { readBatchRows, validateTask } from '../batch-file'
import { resolverFor, type ResolveRules } from '../task-resolver'
import type { ParsedLine, ParserMessage } from './batch-parse'

const { path, format, rules, settings } = workerData as {
  path: string
  format: BatchFormat
  rules: ResolveRules
  /** Hashed after the bytes: the source hash batch-stream.ts gives a file (with its settings). */
  settings: string
}
const port = parentPort as NonNullable<typeof parentPort>
const AHEAD = 4
let credits = AHEAD
let wake: (() => void) | null = null
port.on('message', () => {
  credits++
  wake?.()
})

const post = (message: ParserMessage) => port.postMessage(message)

async function main(): Promise<void> {
  const resolve = resolverFor(rules)
  const hash = createHash('sha256')
  let read = 0
  const onChunk = (chunk: Buffer) => {
    hash.update(chunk)
    read += chunk.length
  }
  for await (const rows of readBatchRows(path, format, onChunk)) {
    const lines: ParsedLine[] = []
    for (const row of rows) {
      const errors: LineError[] = []
      if ('error' in row) {
        lines.push({ line: row.line, errors: [row.error] })
        continue
      }
      const parsed = validateTask(row.value, row.line, errors)
      if (!parsed) {
        lines.push({ line: row.line, errors })
        continue
      }
      // The payload travels as its canonical JSON only.
      const { payload: _payload, ...light } = parsed
      const task = resolve(parsed, errors)
      if (task) {
        const { payload: _p, ...resolved } = task
        lines.push({ line: row.line, task: resolved })
      } else {
        lines.push({ line: row.line, unresolved: light, errors })
      }
    }
    while (credits === 0) await new Promise<void>((r) => (wake = r))
    credits--
    post({ kind: 'lines', json: JSON.stringify(lines), read })
  }
  post({ kind: 'done', hash: hash.update(settings).digest('hex'), read })
}

main().catch((err: unknown) => post({ kind: 'failed', message: (err as Error).message }))
