import { afterEach, describe, expect, it } from 'vitest'
import { ReadWorker } from '../../../../src/main/engine/db/read-worker'
import { openLedgerDb } from '../../../helpers/ledger-db'

let h: ReturnType<typeof openLedgerDb>
let worker: ReadWorker
afterEach(async () => {
  await worker.close()
  h.close()
})

function setup(): void {
  h = openLedgerDb()
  h.db.exec(`CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)`)
  worker = new ReadWorker({ file: h.file })
}

describe('ReadWorker', () => {
  it('runs statements on its own connection, with named parameters, in one snapshot', async () => {
    setup()
    const [rows, count] = await worker.run([
      { sql: 'SELECT n FROM t WHERE n >= @min ORDER BY n', params: { min: 2 } },
      { sql: 'SELECT COUNT(*) AS c FROM t', params: {} },
    ])
    expect(rows).toEqual([{ n: 2 }, { n: 3 }])
    expect(count).toEqual([{ c: 3 }])
    // It sees what the writer committed since.
    h.db.exec('INSERT INTO t VALUES (4)')
    expect(await worker.run([{ sql: 'SELECT MAX(n) AS m FROM t', params: {} }])).toEqual([
      [{ m: 4 }],
    ])
  })

  it('is read-only, and reports a failing statement as a rejection with its message and code', async () => {
    setup()
    await expect(
      worker.run([{ sql: 'INSERT INTO t VALUES (9) RETURNING n', params: {} }]),
    ).rejects.toMatchObject({ code: 'SQLITE_READONLY' })
    await expect(worker.run([{ sql: 'SELECT nope FROM t', params: {} }])).rejects.toThrow(
      /no such column: nope/,
    )
    // Still usable afterwards.
    expect(await worker.run([{ sql: 'SELECT COUNT(*) AS c FROM t', params: {} }])).toEqual([
      [{ c: 3 }],
    ])
  })

  it('rejects what is pending when closed, and starts again on the next run', async () => {
    setup()
    const slow = worker.run([
      {
        sql: `WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 50000000)
              SELECT COUNT(*) AS c FROM r`,
        params: {},
      },
    ])
    const rejected = expect(slow).rejects.toThrow(/closed/)
    await worker.close()
    await rejected
    expect(await worker.run([{ sql: 'SELECT 1 AS one', params: {} }])).toEqual([[{ one: 1 }]])
  })
})
