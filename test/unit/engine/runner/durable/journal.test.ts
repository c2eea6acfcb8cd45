// The call journal's drop of a finished execution, deferred to the commit of the transaction that
// stored its result: on a real SQLite file under the engine's group commit. The rows go with that
// transaction (kept if it is lost), and a new entry of the same execution written before the
// commit is not taken with them.
import { afterEach, describe, expect, it } from 'vitest'
import { StepWrites } from '../../../../../src/main/engine/db/step-writes'
import {
  CallJournal,
  requestHash,
  type EntryKey,
} from '../../../../../src/main/engine/runner/durable/journal'
import { openLedgerDb } from '../../../../helpers/ledger-db'

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function setup() {
  const file = openLedgerDb()
  cleanups.push(() => file.close())
  const { db } = file
  const ids = [1, 2, 3].map((i) =>
    Number(
      db
        .prepare(
          `INSERT INTO fingerprints(fp, type, payload, steps, provider, model, epoch, state)
           VALUES (?, 't', '{}', 1, 'sim', 'm', 1, 'running')`,
        )
        .run(Buffer.alloc(32, i)).lastInsertRowid,
    ),
  )
  const writes = new StepWrites(db, { onError: () => {} })
  const journal = new CallJournal(db, writes)
  const key = (fpId: number, idx = 1): EntryKey => ({
    fpId,
    idx,
    kind: 'call',
    hash: requestHash('call', { fpId, idx }),
    epoch: 1,
    taskId: fpId,
    ts: 1,
  })
  const rows = () =>
    db.prepare('SELECT fp_id AS fpId, idx, state FROM call_journal ORDER BY fp_id, idx').all()
  return { db, writes, journal, key, rows, ids }
}

describe('CallJournal.drop', () => {
  it('deletes the execution in the transaction that stored its result, at its commit', () => {
    const { writes, journal, key, rows, ids } = setup()
    for (const id of ids) journal.intent(key(id))
    writes.commit()
    writes.run(() => {
      journal.drop(ids[0]!)
      journal.drop(ids[1]!)
    })
    // Not visible as gone to a read of another execution, nor taken from it.
    expect(journal.entries(ids[2]!).size).toBe(1)
    writes.commit()
    expect(rows()).toEqual([{ fpId: ids[2], idx: 1, state: 0 }])
  })

  it('keeps the rows when that transaction is lost', () => {
    const { db, writes, journal, key, rows, ids } = setup()
    journal.intent(key(ids[0]!))
    writes.commit()
    writes.run(() => journal.drop(ids[0]!))
    // SQLite rolled the transaction back on its own (a full disk): the next write sees it lost.
    db.exec('ROLLBACK')
    writes.run(() => journal.intent(key(ids[1]!)))
    writes.commit()
    expect(rows()).toEqual([
      { fpId: ids[0], idx: 1, state: 0 },
      { fpId: ids[1], idx: 1, state: 0 },
    ])
  })

  it('does not take an entry of the same execution written after the drop', () => {
    const { writes, journal, key, rows, ids } = setup()
    journal.intent(key(ids[0]!, 1))
    journal.intent(key(ids[0]!, 2))
    writes.commit()
    writes.run(() => {
      journal.drop(ids[0]!)
      // The same execution again in the same transaction (its result expired at once).
      expect(journal.entries(ids[0]!).size).toBe(0)
      journal.intent(key(ids[0]!, 1))
    })
    writes.commit()
    expect(rows()).toEqual([{ fpId: ids[0], idx: 1, state: 0 }])
  })

  it('deletes at once outside a transaction of the scope', () => {
    const { db, writes, journal, key, rows, ids } = setup()
    journal.intent(key(ids[0]!))
    writes.commit()
    new CallJournal(db).drop(ids[0]!)
    expect(rows()).toEqual([])
  })
})
