// Each shipped migration, tested the way it meets a user: a database written by the previous
// schema, with rows in it, opened by this build.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { MIGRATIONS } from '../../../../src/main/engine/db/schema'

const file = () => join(mkdtempSync(join(tmpdir(), 'pacer-mig-')), 'pacer.db')

describe('migration 2: batches.driver', () => {
  it('keeps every v1 batch and task, as console batches (driver NULL)', () => {
    const path = file()
    const v1 = openDatabase(path, { migrations: MIGRATIONS.slice(0, 1) })
    v1.prepare(
      `INSERT INTO batches(id, name, source, source_hash, state, audit, created_at, updated_at)
       VALUES ('b1', 'old.jsonl', '/tmp/old.jsonl', 'h', 'interrupted', 0, 1, 2)`,
    ).run()
    v1.prepare(
      `INSERT INTO tasks(batch_id, seq, type, payload, fp, steps, provider, model, status, created_at)
       VALUES ('b1', 1, 't', '{}', 'fp1', 1, 'sim', 'sim-small', 'queued', 1)`,
    ).run()
    v1.close()

    const v2 = openDatabase(path)
    try {
      expect(v2.prepare('SELECT version FROM migrations ORDER BY version').pluck().all()).toEqual(
        MIGRATIONS.map((m) => m.version),
      )
      expect(v2.prepare('SELECT id, name, state, driver FROM batches').all()).toEqual([
        { id: 'b1', name: 'old.jsonl', state: 'interrupted', driver: null },
      ])
      expect(v2.prepare('SELECT batch_id, fp, status FROM tasks').all()).toEqual([
        { batch_id: 'b1', fp: 'fp1', status: 'queued' },
      ])
      v2.prepare("UPDATE batches SET driver = 'host:1:abc' WHERE id = 'b1'").run()
      expect(v2.prepare('SELECT driver FROM batches').pluck().get()).toBe('host:1:abc')
    } finally {
      v2.close()
    }
  })
})
