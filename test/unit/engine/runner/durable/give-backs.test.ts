// A claim given back in a transaction that SQLite then rolls back (a later write of it meets the
// full disk): the release must be tried again once there is room. Lost, it left the claim running
// and the task's duplicates waited out its whole lease (30 s in the boosted disk-full run).
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteClaimStore } from '../../../../../src/main/engine/claims/claims'
import { fingerprint } from '../../../../../src/main/engine/core/fingerprint'
import { fpKey } from '../../../../../src/main/engine/db/codes'
import { StepWrites } from '../../../../../src/main/engine/db/step-writes'
import { WriteHealth } from '../../../../../src/main/engine/db/write-failures'
import { GiveBacks } from '../../../../../src/main/engine/runner/durable/held-writes'
import { fakeClock } from '../../../../helpers/clock'
import { openLedgerDb } from '../../../../helpers/ledger-db'
import { until } from '../../../../helpers/until'

const LEASE = 60_000
const FP = fingerprint('summarize', { text: 'given back' })

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

describe('GiveBacks', () => {
  it('tries a release again when the transaction it went in is rolled back', async () => {
    const file = openLedgerDb()
    const { db } = file
    const health = new WriteHealth({ dbPath: file.file, probe: () => true, minDelayMs: 10 })
    const writes = new StepWrites(db, { onError: () => {}, health })
    cleanups.push(() => {
      health.close()
      file.close()
    })
    const claims = new SqliteClaimStore({ db, clock: fakeClock(), writes })
    const warnings: string[] = []
    const giveBacks = new GiveBacks(writes, (m) => warnings.push(m))
    health.on('resumed', () => giveBacks.retry())
    const state = () =>
      (
        db.prepare('SELECT state FROM fingerprints WHERE fp = ?').get(fpKey(FP)) as {
          state: string
        }
      ).state

    const claim = claims.claim(FP, 'worker-1', LEASE)
    if (claim.kind !== 'owned') throw new Error(`claimed: ${claim.kind}`)
    writes.commit()
    // Given back in the open transaction; a later write of it needs pages the limit refuses, and
    // SQLite rolls the whole transaction back, the release with it.
    giveBacks.run(() => claims.release(FP, claim.epoch))
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`)
    expect(() =>
      writes.run(() => db.prepare('INSERT INTO results(body) VALUES (?)').run('x'.repeat(200_000))),
    ).toThrow(/full/)
    expect(db.inTransaction).toBe(false)
    expect(health.blocked).toBe(true)
    expect(state()).toBe('running')

    // Room again: the look finds it, the run resumes, and the release is written.
    db.pragma('max_page_count = 1000000')
    await until(() => !health.blocked)
    await writes.durable()
    expect(state()).toBe('released')
    expect(warnings).toEqual([])
  })
})
