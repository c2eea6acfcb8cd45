// Migration 18, tested the way it meets a user: a database written by schema 17 with a batch and a
// provider batch in it, opened by this build: both kept, the batch not marked as a batch-API one
// (it was never resumed as such), the submission under no batch; new ones name theirs.
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/migrations'
import { BatchJournal } from '../../../../src/main/engine/providers/batch/journal'
import { file } from './migration-files'

describe('migration 18: batch-API batches and the batch of each submission', () => {
  it('keeps every v17 row; new submissions name their batch and are read per batch', () => {
    const path = file()
    const v17 = openDatabase(path, { migrations: MIGRATIONS.filter((m) => m.version <= 17) })
    v17
      .prepare(
        `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
         VALUES ('b1', 'run.jsonl', '/tmp/run.jsonl', 'h', 'running', 0, 1, 2)`,
      )
      .run()
    // Schema 17's journal has no batch column: write the row as that build did.
    v17
      .prepare(
        `INSERT INTO provider_batches (vendor, endpoint, model, status, requests, created_at)
         VALUES ('openai', 'http://x/v1/chat/completions', 'm', 'in_progress', 2, 5)`,
      )
      .run()
    v17.close()

    const v18 = openDatabase(path)
    try {
      expect(v18.prepare('SELECT id, state, batch_api FROM batches').all()).toEqual([
        { id: 'b1', state: 'running', batch_api: 0 },
      ])
      const journal = new BatchJournal(v18)
      expect(journal.list()).toEqual([
        expect.objectContaining({ status: 'in_progress', batchId: null }),
      ])
      const id = journal.begin(
        { vendor: 'anthropic', endpoint: 'https://api.anthropic.com/v1/messages', model: 'm' },
        ['a'],
        10,
        'b1',
      )
      expect(journal.ofBatch('b1').map((s) => s.id)).toEqual([id])
      expect(journal.ofBatch('b2')).toEqual([])
    } finally {
      v18.close()
    }
  })
})
