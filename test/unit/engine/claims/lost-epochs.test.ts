// A claim lost to a rolled-back transaction (SQLite's page limit as the full disk): its epoch must
// not be handed out again, or the task still holding it frees the next owner's claim as its own.
// In `pacer run` that let a third task claim the fingerprint and send its first call again.
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteClaimStore } from '../../../../src/main/engine/claims/claims'
import { fingerprint } from '../../../../src/main/engine/core/fingerprint'
import type { ClaimAttempt } from '../../../../src/main/engine/core/types'
import { fpKey } from '../../../../src/main/engine/db/codes'
import { StepWrites } from '../../../../src/main/engine/db/step-writes'
import { fakeClock } from '../../../helpers/clock'
import { openLedgerDb } from '../../../helpers/ledger-db'

const LEASE = 60_000
const FP = fingerprint('summarize', { text: 'lost epochs' })

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

function setUp() {
  const file = openLedgerDb()
  cleanups.push(() => file.close())
  const { db } = file
  const clock = fakeClock()
  const writes = new StepWrites(db, { onError: () => {} })
  const claims = new SqliteClaimStore({ db, clock, writes })
  /** A write of the open transaction meets the page limit: SQLite rolls the whole of it back. */
  const loseOpenTransaction = () => {
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`)
    const big = 'x'.repeat(200_000)
    expect(() =>
      writes.run(() => db.prepare('INSERT INTO results(body) VALUES (?)').run(big)),
    ).toThrow(/full/)
    expect(db.inTransaction).toBe(false)
    db.pragma('max_page_count = 1000000')
  }
  const onDisk = () =>
    db.prepare('SELECT state, owner, epoch FROM fingerprints WHERE fp = ?').get(fpKey(FP)) as
      { state: string; owner: string; epoch: number } | undefined
  return { db, clock, writes, claims, loseOpenTransaction, onDisk }
}

function ownedEpoch(attempt: ClaimAttempt): number {
  expect(attempt.kind).toBe('owned')
  return (attempt as Extract<ClaimAttempt, { kind: 'owned' }>).epoch
}

describe('claim epochs a rolled-back transaction took', () => {
  it('are not handed out again: the holder of the lost one cannot release the next claim', () => {
    const { writes, claims, loseOpenTransaction, onDisk } = setUp()
    // Claimed in the scope's open transaction, which the full disk then takes back.
    const lost = ownedEpoch(claims.claim(FP, 'worker-1', LEASE))
    loseOpenTransaction()
    expect(onDisk()?.state ?? null).not.toBe('running')

    // Another task of the same process claims the fingerprint once there is room.
    const next = ownedEpoch(claims.claim(FP, 'worker-1', LEASE))
    expect(next).toBeGreaterThan(lost)
    // The first task learns its pick was lost and gives back the claim it thinks it holds.
    expect(claims.release(FP, lost)).toBe(false)
    expect(claims.renew(FP, lost, LEASE)).toBe(false)
    writes.commit()
    expect(onDisk()).toMatchObject({ state: 'running', owner: 'worker-1', epoch: next })
    // So a third task finds the fingerprint busy and waits, instead of claiming and sending again.
    expect(claims.claim(FP, 'worker-1', LEASE)).toMatchObject({ kind: 'busy', epoch: next })
    expect(claims.complete(FP, next, '{"text":"ok"}', 'succeeded')).toBe(true)
  })

  it('stay lost through a second rollback, and a committed claim keeps its epoch', () => {
    const { writes, claims, loseOpenTransaction, onDisk } = setUp()
    const first = ownedEpoch(claims.claim(FP, 'worker-1', LEASE))
    loseOpenTransaction()
    const second = ownedEpoch(claims.claim(FP, 'worker-1', LEASE))
    loseOpenTransaction()
    const third = ownedEpoch(claims.claim(FP, 'worker-1', LEASE))
    expect(new Set([first, second, third]).size).toBe(3)
    expect(third).toBeGreaterThan(second)
    writes.commit()
    expect(onDisk()).toMatchObject({ state: 'running', epoch: third })
    expect(claims.release(FP, third)).toBe(true)
    writes.commit()
    // Committed epochs count up from the file as before.
    expect(ownedEpoch(claims.claim(FP, 'worker-1', LEASE))).toBe(third + 1)
  })
})
