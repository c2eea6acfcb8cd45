// Migration 16, tested the way it meets a user: a database written by schema 15, with rows in it,
// opened by this build; the batch journal then records a submission and its lines.
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/migrations'
import { BatchJournal } from '../../../../src/main/engine/providers/batch/journal'
import { file } from './migration-files'

describe('migration 16: the provider batch journal', () => {
  it('keeps every v15 row and adds the journal a submission is written to before it is sent', () => {
    const path = file()
    const v15 = openDatabase(path, { migrations: MIGRATIONS.filter((m) => m.version <= 15) })
    v15
      .prepare(
        `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
         VALUES ('b1', 'run.jsonl', '/tmp/run.jsonl', 'h', 'running', 0, 1, 2)`,
      )
      .run()
    v15.close()

    const v16 = openDatabase(path)
    try {
      expect(v16.prepare('SELECT id, state FROM batches').all()).toEqual([
        { id: 'b1', state: 'running' },
      ])
      const journal = new BatchJournal(v16)
      const id = journal.begin(
        { vendor: 'anthropic', endpoint: 'https://api.anthropic.com/v1/messages', model: 'm' },
        ['a', 'b'],
        100,
      )
      expect(journal.submission(id)).toMatchObject({ status: 'submitting', remoteId: null })
      expect(journal.open().map((s) => s.id)).toEqual([id])
      journal.submitted(id, 'msgbatch_1', null, 'in_progress')
      const ok = { customId: 'a', state: 'succeeded' as const, status: 200, body: '{"x":1}' }
      journal.end(id, 'ended', [ok], { state: 'expired', status: 410, body: '{}' }, 200)
      expect(journal.open()).toEqual([])
      expect(journal.latest('a')).toMatchObject({
        state: 'succeeded',
        status: 200,
        delivered: false,
      })
      expect(journal.latest('b')).toMatchObject({ state: 'expired', status: 410 })
      expect(journal.byRemoteId('msgbatch_1')).toMatchObject({ ended: true, endedAt: 200 })
      // One line per custom_id and submission.
      expect(() =>
        v16
          .prepare(
            "INSERT INTO provider_batch_lines(custom_id, submission, state) VALUES ('a', ?, 'pending')",
          )
          .run(id),
      ).toThrow(/UNIQUE|PRIMARY/)
    } finally {
      v16.close()
    }
  })
})
