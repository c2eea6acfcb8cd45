// What the --batch-api integration tests share: a vendor double whose clock a ticker moves while a
// real `pacer run` child polls it, the run's command line per vendor, and reads of its database.
import { join } from 'node:path'
import { query, runPacer, startPacer, tempDir, writeJsonl, type CliResult } from '../../helpers/cli'
import {
  startBatchVendor,
  type BatchVendor,
  type BatchVendorOptions,
} from '../../helpers/batch-vendor/server'
import type { FakeClock } from '../../helpers/clock'

export type Dialect = 'openai' | 'anthropic'

export const MODELS: Record<Dialect, string> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-haiku-4-5',
}
/** The bundled list prices of those models (prices-table.ts), which the double bills at half. */
export const LIST_PRICES = {
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'claude-haiku-4-5': { input: 1, output: 5 },
}

export interface Harness {
  vendor: BatchVendor
  dir: string
  db: string
  /** Moves the double's clock `stepMs` every 20 ms of real time until stopped. */
  tick(stepMs?: number): void
  stopTicking(): void
  args(dialect: Dialect, file: string, extra?: string[]): string[]
  env(dialect: Dialect): NodeJS.ProcessEnv
  run(dialect: Dialect, file: string, extra?: string[]): Promise<CliResult>
  start(dialect: Dialect, file: string, extra?: string[]): ReturnType<typeof startPacer>
  submitted(dialect: Dialect): string[]
  /** Writes a batch file. */
  file(name: string, tasks: unknown[]): string
  close(): Promise<void>
}

export async function harness(options: BatchVendorOptions = {}): Promise<Harness> {
  const vendor = await startBatchVendor(options)
  const dir = tempDir('pacer-batch-api-')
  const db = join(dir, 'pacer.db')
  let ticker: NodeJS.Timeout | undefined
  const h: Harness = {
    vendor,
    dir,
    db,
    tick(stepMs = 5_000) {
      clearInterval(ticker)
      ticker = setInterval(() => (vendor.clock as FakeClock).advance(stepMs), 20)
    },
    stopTicking: () => clearInterval(ticker),
    args: (dialect, file, extra = []) => [
      'run',
      file,
      '--batch-api',
      '--provider',
      dialect,
      '--model',
      MODELS[dialect],
      '--base-url',
      dialect === 'openai' ? vendor.openaiBase : vendor.url,
      '--db',
      db,
      ...extra,
    ],
    env: (dialect) => ({
      [dialect === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY']: 'sk-test-batch',
      PACER_BATCH_POLL_MS: '50',
      PACER_BATCH_SETTLE_MS: '300',
    }),
    run: (dialect, file, extra) => runPacer(h.args(dialect, file, extra), h.env(dialect)),
    start: (dialect, file, extra) => startPacer(h.args(dialect, file, extra), h.env(dialect)),
    submitted: (dialect) =>
      dialect === 'openai' ? vendor.openai.submitted : vendor.anthropic.submitted,
    file: (name, tasks) => writeJsonl(dir, name, tasks),
    async close() {
      clearInterval(ticker)
      await vendor.close()
    },
  }
  return h
}

export interface AnswerRecord {
  line: number
  status: string
  origin: string | null
  text: string | null
}

/** `pacer results` of the latest batch, as records. */
export async function results(db: string): Promise<AnswerRecord[]> {
  const r = await runPacer(['results', '--db', db])
  if (r.code !== 0) throw new Error(`pacer results failed: ${r.stderr}`)
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AnswerRecord)
}

/** What the ledger billed at the batch rate, and everything it billed. */
export function ledgerCost(db: string): {
  batchMicros: number
  totalMicros: number
  batchRows: number
} {
  const [row] = query<{ batch: number; total: number; n: number }>(
    db,
    `SELECT COALESCE(SUM(CASE WHEN price_version LIKE '%+batch' THEN cost_micros END), 0) AS batch,
       COALESCE(SUM(cost_micros), 0) AS total,
       SUM(price_version LIKE '%+batch') AS n FROM ledger`,
  )
  return { batchMicros: row!.batch, totalMicros: row!.total, batchRows: row!.n ?? 0 }
}
