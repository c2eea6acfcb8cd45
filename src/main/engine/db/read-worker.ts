import { Worker } from 'node:worker_threads'

/** One statement for the worker: its SQL and named parameters. */
export interface ReadQuery {
  sql: string
  params: Record<string, string | number>
}

export interface ReadWorkerOptions {
  /** The database file (a `:memory:` database has nothing another connection could read). */
  file: string
  /** Path to a better-sqlite3 `.node` built for another ABI (Electron), as openDatabase takes it. */
  nativeBinding?: string
  /** @default 5000 */
  busyTimeoutMs?: number
}

// The worker's code is this string rather than a file of its own: the same source then runs under
// tsx (the CLI), vitest and electron-vite's bundle, none of which would have to know about a second
// entry point. It only runs SQL it is sent, on its own read-only connection, each batch of
// statements in one read transaction (one snapshot, as the main thread's reads get).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.sqlite)
const db = new Database(workerData.file, {
  readonly: true,
  fileMustExist: true,
  timeout: workerData.busyTimeoutMs,
  nativeBinding: workerData.nativeBinding,
})
const statements = new Map()
const prepared = (sql) => {
  let s = statements.get(sql)
  if (!s) {
    s = db.prepare(sql)
    statements.set(sql, s)
  }
  return s
}
const runAll = db.transaction((queries) => queries.map((q) => prepared(q.sql).all(q.params)))
parentPort.on('message', ({ id, queries }) => {
  try {
    parentPort.postMessage({ id, rows: runAll(queries) })
  } catch (err) {
    parentPort.postMessage({ id, error: { message: String(err && err.message), code: err && err.code } })
  }
})
`

interface Pending {
  resolve(rows: unknown[][]): void
  reject(err: Error): void
}

/**
 * A worker thread with its own read-only connection, for reads too long for the thread that
 * answers requests (a rollup over a filter no maintained rollup answers): the event loop stays free
 * while SQLite works. Started on first use; `unref`'d, so it never keeps a process alive.
 */
export class ReadWorker {
  readonly #options: ReadWorkerOptions
  #worker: Worker | null = null
  #nextId = 1
  readonly #pending = new Map<number, Pending>()

  constructor(options: ReadWorkerOptions) {
    this.#options = options
  }

  /** Runs the statements in one read transaction; resolves with each one's rows. */
  run(queries: readonly ReadQuery[]): Promise<unknown[][]> {
    const worker = this.#start()
    const id = this.#nextId++
    return new Promise<unknown[][]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      worker.postMessage({ id, queries })
    })
  }

  /** Stops the worker (pending reads are rejected); the next run starts a new one. */
  async close(): Promise<void> {
    const worker = this.#worker
    this.#worker = null
    this.#failAll(new Error('the read worker was closed'))
    if (worker) await worker.terminate()
  }

  #start(): Worker {
    if (this.#worker) return this.#worker
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        sqlite: require.resolve('better-sqlite3'),
        file: this.#options.file,
        nativeBinding: this.#options.nativeBinding,
        busyTimeoutMs: this.#options.busyTimeoutMs ?? 5000,
      },
    })
    worker.unref()
    worker.on(
      'message',
      (m: { id: number; rows?: unknown[][]; error?: { message: string; code?: string } }) => {
        const p = this.#pending.get(m.id)
        if (!p) return
        this.#pending.delete(m.id)
        if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code }))
        else p.resolve(m.rows ?? [])
      },
    )
    const fail = (err: Error) => {
      if (this.#worker !== worker) return
      this.#worker = null
      this.#failAll(err)
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the read worker stopped (exit code ${code})`)))
    this.#worker = worker
    return worker
  }

  #failAll(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err)
    this.#pending.clear()
  }
}
