import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { openDatabase } from '../../src/main/engine/db'
import type { LedgerRecordInput } from '../../src/main/engine/ledger/ledger'

/** A real SQLite file in a fresh temp dir, opened as the app opens it; close() removes both. */
export function openLedgerDb(): { db: Database.Database; file: string; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'pacer-ledger-'))
  const file = join(dir, 'pacer.db')
  const db = openDatabase(file)
  return {
    db,
    file,
    close() {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** One executed first-step call as the runner records it; the test names what matters to it. */
export function executedCall(
  fields: Pick<LedgerRecordInput, 'taskId' | 'fp' | 'taskType' | 'provider' | 'model'> &
    Partial<LedgerRecordInput>,
): LedgerRecordInput {
  return {
    batchId: null,
    worker: 'w',
    step: 1,
    usage: { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 },
    outcome: 'executed',
    latencyMs: 1,
    status: 200,
    epoch: 1,
    ...fields,
  }
}
