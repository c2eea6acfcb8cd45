// This machine's completed claims, as a team store that lost its data is re-seeded with them
// (claims-reseed.ts). Not a hot statement: it runs once per re-seed, a page at a time by id, so
// no read holds the connection between pages (the runner writes through it meanwhile).
import type Database from 'better-sqlite3'
import type { ClaimSeed } from './redis/reseed'
import { fpText } from '../db/codes'
import type { StoredStatus } from '../core/types'

const PAGE = 1000

const COMPLETED_PAGE = `
  SELECT f.id, f.fp, f.status, f.owner, f.epoch, r.body AS result, f.cost_micros, f.completed_at
  FROM fingerprints f JOIN results r ON r.id = f.result_id
  WHERE f.id > ? AND f.state = 'completed'
  ORDER BY f.id LIMIT ${PAGE}`

interface Row {
  id: number
  fp: Buffer | string
  status: StoredStatus
  owner: string | null
  epoch: number
  result: string
  cost_micros: number | null
  completed_at: number | null
}

/** Every completed claim of the database, a page at a time (retention is the store's to judge). */
export function completedClaims(db: Database.Database): () => Iterable<ClaimSeed> {
  const page = db.prepare<[number], Row>(COMPLETED_PAGE)
  return function* () {
    for (let after = 0; ;) {
      const rows = page.all(after)
      for (const r of rows) {
        yield {
          fp: fpText(r.fp),
          owner: r.owner ?? '',
          epoch: r.epoch,
          status: r.status,
          result: r.result,
          costMicros: r.cost_micros,
          completedAt: r.completed_at ?? 0,
        }
      }
      if (rows.length < PAGE) return
      after = rows[rows.length - 1]!.id
    }
  }
}
