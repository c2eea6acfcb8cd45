import type Database from 'better-sqlite3'

/** An explicit idempotency key came back with a different payload (Stripe's rule). */
export class KeyReusedError extends Error {
  readonly code = 'key_reused_with_different_payload'

  constructor(
    readonly key: string,
    readonly firstPayloadFp: string,
    readonly payloadFp: string,
  ) {
    super(
      `idempotency key ${JSON.stringify(key)} was already used with a different payload ` +
        `(first ${firstPayloadFp.slice(0, 12)}…, now ${payloadFp.slice(0, 12)}…)`,
    )
    this.name = 'KeyReusedError'
  }
}

interface Statements {
  insert: Database.Statement<[string, string, number]>
  select: Database.Statement<[string], { payload_fp: string }>
}

const statements = new WeakMap<Database.Database, Statements>()

function prepared(db: Database.Database): Statements {
  let s = statements.get(db)
  if (s === undefined) {
    s = {
      insert: db.prepare(
        `INSERT INTO idempotency_keys(key, payload_fp, created_at) VALUES (?, ?, ?)
         ON CONFLICT(key) DO NOTHING`,
      ),
      select: db.prepare('SELECT payload_fp FROM idempotency_keys WHERE key = ?'),
    }
    statements.set(db, s)
  }
  return s
}

/**
 * Records the first fingerprint seen with `key` (the engine passes the execution's: payload,
 * provider, model, steps); throws KeyReusedError when the key comes back with another one. Safe
 * across processes: the insert-or-ignore decides who was first.
 */
export function checkIdempotencyKey(
  db: Database.Database,
  key: string,
  payloadFp: string,
  now: number,
): void {
  const s = prepared(db)
  if (s.insert.run(key, payloadFp, now).changes === 1) return
  // Rows are never deleted, so the row that beat our insert is still there to read.
  const first = s.select.get(key)
  if (first === undefined) throw new Error(`idempotency key ${JSON.stringify(key)} vanished`)
  if (first.payload_fp !== payloadFp) throw new KeyReusedError(key, first.payload_fp, payloadFp)
}
