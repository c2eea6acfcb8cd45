// A team ledger entry as the appender writes it, read back: what the batch discount saved rides
// after the execution deltas; an entry appended before it did is still read, with none.
import { describe, expect, it } from 'vitest'
import { Ledger } from '../../../../../src/main/engine/ledger/ledger'
import { Prices } from '../../../../../src/main/engine/pricing/prices'
import { decodeEntry, EntryReader } from '../../../../../src/main/engine/team/ledger/entries'
import { executedCall, openLedgerDb } from '../../../../helpers/ledger-db'

describe('team ledger entries', () => {
  it('carry what the batch discount saved; an older entry without it reads as unknown', () => {
    const h = openLedgerDb()
    try {
      const ledger = new Ledger({ db: h.db, prices: new Prices(), foldEvery: 1 })
      const call = { taskType: 't', provider: 'openai', model: 'gpt-4o-mini' }
      const usage = {
        inputTokens: 1001,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 33,
      }
      ledger.record(executedCall({ ts: 1, taskId: 1, fp: 'a', ...call, usage, tier: 'batch' }))
      ledger.record(executedCall({ ts: 2, taskId: 2, fp: 'b', ...call, usage }))
      const saved = h.db.prepare('SELECT batch_saved_micros FROM ledger ORDER BY id').pluck().all()
      // List minus batch, each rounded once: not the batch cost itself (that is what was derived).
      expect(saved[0]).toBeGreaterThan(0)
      expect(saved[1]).toBeNull()

      const { flat } = new EntryReader(h.db).entries(0, 10, 'm', 'm/db')
      const entries = [flat.slice(0, 10), flat.slice(10, 20)]
      expect(entries.map((e, i) => decodeEntry(`${i}-0`, e).batchSavedMicros)).toEqual(saved)

      // As a Pacer before it appended them: the data array ends at the deltas.
      const old = [...entries[0]!]
      const data = JSON.parse(old[9]!) as unknown[]
      old[9] = JSON.stringify(data.slice(0, -1))
      const row = decodeEntry('0-1', old)
      expect(row.batchSavedMicros).toBeUndefined()
      expect(row.costMicros).toBe(decodeEntry('0-0', entries[0]!).costMicros)
      void ledger.close()
    } finally {
      h.close()
    }
  })
})
