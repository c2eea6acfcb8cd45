// `pacer run FILE` on a file of any size: read, validate, fingerprint and queue it line by line in
// one transaction (nothing is queued if a line is invalid, unless the caller skips them), in the
// memory of a chunk, a line and the first problems.
import { createHash, type Hash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import type Database from 'better-sqlite3'
import type { BatchFormat, BatchOwner, BatchSummary, LineError } from '../../../shared/contract'
import { readBatchRows, TaskValidator, type KeyRegistry } from '../intake/batch-file'
import { EngineError } from '../core/errors'
import { ForecastAccumulator, type Forecast } from '../intake/forecast'
import { checkIdempotencyKey } from '../intake/idempotency-keys'
import { commitOpenScopes } from '../db/step-writes'
import type { BatchWriter } from '../queue/queue'
import { resolverFor, type ResolvedTask } from '../intake/task-resolver'
import {
  forecastOptions,
  resolveRules,
  taskResolver,
  type StartedFile,
  type TaskDefaults,
} from './task-defaults'
import { forgetFailure, retryTeamFailures, type EngineParts } from './parts'
import { capsForFile } from './budgets'

/** A batch file as `pacer run` streams it. */
export interface StreamedFile {
  /** Absolute path: read twice at most (a hash pass when a resume is possible, then the rows). */
  path: string
  format: BatchFormat
  /** The batch's source and name, as listed. */
  source: string
  name: string
  defaults: TaskDefaults
  audit: boolean
  /** Queue a new batch even when an interrupted one of the same file exists (`--new`). */
  fresh?: boolean
  /** Forget the stored failures of the file's tasks first, so they run again (`--retry-failed`). */
  retryFailed?: boolean
  /** Queue the valid lines when some are invalid (`--skip-invalid`); otherwise nothing is queued. */
  skipInvalid?: boolean
  /** Every problem, in line order, as it is found. */
  onError?: (error: LineError) => void
  /** Bytes read so far, out of `total` (the file's size, times the passes it will take). */
  onProgress?: (read: number, total: number) => void
}

export interface StreamedStart {
  /** The batch queued or resumed; null when nothing was (invalid lines, or no valid task). */
  started: StartedFile | null
  /** Valid tasks in the file. */
  valid: number
  /** Lines with at least one problem. */
  invalidLines: number
  /**
   * A batch of the same file another live process runs (its owner says which): this run queued a
   * batch of its own beside it, sharing its claims and results.
   */
  live?: BatchSummary
  /** The run that drove the batch resumed, gone (killed, crashed) rather than stopped. */
  resumedFrom?: BatchOwner
}

/** What the lifecycle lends the stream: its parts, and how a resumed batch is taken over. */
export interface StreamDeps {
  parts: EngineParts
  resume(batchId: string, driver: string): boolean
  started(batchId: string, resumed: boolean, retried: number): StartedFile
}

/** See StreamedFile. Throws an EngineError (with its line) for a key reused against the database. */
export async function startStreamedFile(
  deps: StreamDeps,
  file: StreamedFile,
  size: number,
): Promise<StreamedStart> {
  const { parts } = deps
  const { queue, runner, db } = parts
  const startedAt = parts.clock.now()
  // Tasks of a killed run come back to the queue first (at once when its process is known to be
  // gone), and its batch is interrupted, so this run resumes it.
  runner.sweepExpired()
  // The insert is one transaction of its own, begun below: no step may be open around it.
  commitOpenScopes()
  // The run's params count too (undefined ones are left out: older hashes stay the same).
  const settings = JSON.stringify({
    audit: file.audit,
    provider: file.defaults.provider,
    model: file.defaults.model,
    params: file.defaults.params,
    // Another module, or changed code, is another batch (and other fingerprints).
    agents: file.defaults.agents,
  })
  // Hashing first costs a pass over the file: worth it only if there is something to resume, or
  // another process runs it (worth a line saying so).
  const mayResume =
    !file.fresh && (queue.hasInterrupted(file.source) || queue.hasRunning(file.source))
  const passes = mayResume ? 2 : 1
  const progress = (read: number) => file.onProgress?.(read, size * passes)
  const known = mayResume ? await hashFile(file.path, settings, progress) : null
  const resumable = known === null ? null : queue.findResumable(known)
  const live = known === null || resumable ? null : queue.findLiveRun(known)

  const scan = new FileScan(parts, file)
  let writer: BatchWriter | null = null
  db.exec(resumable ? 'BEGIN' : 'BEGIN IMMEDIATE')
  try {
    if (!resumable) {
      writer = queue.openBatch({
        driver: runner.workerId,
        name: file.name,
        source: file.source,
        sourceHash: null,
        audit: file.audit,
      })
    }
    const digest = await scan.run(writer, settings, (read) => progress(read + (known ? size : 0)))
    if (known !== null && digest !== known) {
      throw new EngineError('file_changed', `${file.source} changed while it was read`)
    }
    const refused = scan.valid === 0 || (scan.invalidLines > 0 && !file.skipInvalid)
    if (refused || !writer) {
      db.exec('ROLLBACK')
    } else {
      writer.close()
      queue.setSourceHash(writer.id, digest)
      if (file.defaults.agents) parts.agents.attach(writer.id, file.defaults.agents)
      db.exec('COMMIT')
    }
    if (refused) return { started: null, valid: scan.valid, invalidLines: scan.invalidLines }
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK')
    throw err
  }
  const batchId = resumable ?? (writer as BatchWriter).id
  let retried = 0
  if (file.retryFailed) {
    for (const fp of queue.failedFingerprints(batchId)) if (forgetFailure(parts, fp)) retried++
    retryTeamFailures(parts, batchId, startedAt)
  }
  const before = resumable ? queue.batch(resumable)?.owner : undefined
  if (resumable && deps.resume(resumable, runner.workerId)) {
    return {
      started: deps.started(resumable, true, retried),
      valid: scan.valid,
      invalidLines: scan.invalidLines,
      ...(before?.gone ? { resumedFrom: before } : {}),
    }
  }
  if (resumable) {
    // Resumed by another process in between: queue this run's own batch, as --new would.
    return startStreamedFile(deps, { ...file, fresh: true }, size)
  }
  runner.addBatch(batchId)
  return {
    started: deps.started(batchId, false, retried),
    valid: scan.valid,
    invalidLines: scan.invalidLines,
    ...(live ? { live } : {}),
  }
}

/** One pass over the rows: each validated, resolved, checked and (when `writer`) queued. */
class FileScan {
  valid = 0
  invalidLines = 0
  readonly #parts: EngineParts
  readonly #file: StreamedFile
  readonly #errors: LineError[] = []
  readonly #now: number

  constructor(parts: EngineParts, file: StreamedFile) {
    this.#parts = parts
    this.#file = file
    this.#now = parts.clock.now()
  }

  /** Reads the whole file; returns its source hash (its bytes, then `settings`). */
  async run(
    writer: BatchWriter | null,
    settings: string,
    onRead: (bytes: number) => void,
  ): Promise<string> {
    const validator = new TaskValidator(tempKeys(this.#parts.db))
    const rules = resolveRules(this.#parts, this.#file.defaults)
    const { path, format } = this.#file
    const resolve = resolverFor(rules, true)
    const hash = sourceHash(settings)
    let read = 0
    const onChunk = (chunk: Buffer) => {
      hash.update(chunk)
      read += chunk.length
      onRead(read)
    }
    for await (const rows of readBatchRows(path, format, onChunk)) {
      for (const row of rows) {
        const parsed = validator.accept(row, this.#errors)
        const task = parsed && resolve(parsed, this.#errors)
        if (this.#errors.length > 0) this.#refuse()
        else if (task) this.#take(task, writer)
      }
    }
    return hash.digest()
  }

  #refuse(): void {
    this.invalidLines++
    for (const e of this.#errors) this.#file.onError?.(e)
    this.#errors.length = 0
  }

  #take(task: Omit<ResolvedTask, 'payload'>, writer: BatchWriter | null): void {
    this.valid++
    if (!writer) return
    if (task.key !== null) {
      try {
        // A key names one execution: the same key with another payload, model or step count
        // is a different request, refused like Stripe refuses it.
        checkIdempotencyKey(this.#parts.db, task.key, task.runFp, this.#now)
      } catch (err) {
        throw EngineError.from(err, `line ${task.line}`)
      }
    }
    writer.add({
      seq: task.line,
      type: task.type,
      payloadJson: task.payloadJson,
      fp: task.fp,
      key: task.key,
      steps: task.steps,
      provider: task.provider,
      model: task.model,
      paramsJson: task.paramsJson,
    })
  }
}

/** The keys of the file being read, in a temp table of this connection: any number, on disk. */
function tempKeys(db: Database.Database): KeyRegistry {
  db.exec(`CREATE TEMP TABLE IF NOT EXISTS file_keys (
    key TEXT PRIMARY KEY, line INTEGER NOT NULL, payload_fp TEXT NOT NULL)`)
  db.exec('DELETE FROM temp.file_keys')
  const insert = db.prepare('INSERT OR IGNORE INTO temp.file_keys VALUES (?, ?, ?)')
  const select = db.prepare(
    'SELECT line, payload_fp AS payloadFp FROM temp.file_keys WHERE key = ?',
  )
  return {
    firstUse(key, line, payloadFp) {
      if (insert.run(key, line, payloadFp).changes === 1) return { line, payloadFp }
      return select.get(key) as { line: number; payloadFp: string }
    },
  }
}

/**
 * What makes two runs "the same file": its bytes, then its defaults and audit mode (as
 * BatchLifecycle.startFile hashes the text it is given).
 */
function sourceHash(settings: string): { update(chunk: Buffer): void; digest(): string } {
  const hash: Hash = createHash('sha256')
  return {
    update: (chunk) => hash.update(chunk),
    digest: () => hash.update(settings).digest('hex'),
  }
}

async function hashFile(
  path: string,
  settings: string,
  onRead: (bytes: number) => void,
): Promise<string> {
  const hash = sourceHash(settings)
  let read = 0
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer)
    read += (chunk as Buffer).length
    onRead(read)
  }
  return hash.digest()
}

/** A batch file as `pacer forecast` streams it. */
export type ForecastFile = Pick<StreamedFile, 'path' | 'format' | 'onError' | 'onProgress'> & {
  /** Forecast without deduplication. @default the settings' audit mode */
  audit?: boolean
  /** Output tokens each step is assumed to answer. @default ForecastOptions.outputTokensPerStep */
  assumeOutputTokens?: number
  /** The run's cap to weigh the batch against (`--budget`), beside the kept caps. */
  budgetMicros?: number
  /** What a task naming no provider or model gets (`pacer run`'s flags). @default the settings' */
  defaults?: TaskDefaults
}

/** What `pacer forecast FILE` reports, read line by line. */
export interface StreamedForecast {
  forecast: Forecast | null
  invalidLines: number
}

/** The forecast of a file on disk, streamed: memory for its distinct tasks, not its lines. */
export async function forecastStreamedFile(
  parts: EngineParts,
  file: ForecastFile,
  size: number,
): Promise<StreamedForecast> {
  const { db, prices } = parts
  const acc = new ForecastAccumulator(prices, {
    ...forecastOptions(parts, file.audit, file.assumeOutputTokens),
    caps: capsForFile(parts, file.budgetMicros),
  })
  const validator = new TaskValidator(tempKeys(db))
  const resolve = taskResolver(parts, file.defaults)
  const errors: LineError[] = []
  let read = 0
  let invalidLines = 0
  // The temp table of keys is this connection's alone: a deferred transaction writes nothing else.
  commitOpenScopes()
  db.exec('BEGIN')
  try {
    const rows = readBatchRows(file.path, file.format, (chunk) => {
      read += chunk.length
      file.onProgress?.(read, size)
    })
    for await (const chunk of rows) {
      for (const row of chunk) {
        const parsed = validator.accept(row, errors)
        const task = parsed && resolve(parsed, errors)
        if (errors.length > 0) {
          invalidLines++
          for (const e of errors) file.onError?.(e)
          errors.length = 0
        } else if (task) {
          acc.add(task)
        }
      }
    }
  } finally {
    db.exec('ROLLBACK')
  }
  return { forecast: acc.tasks > 0 ? acc.result() : null, invalidLines }
}
