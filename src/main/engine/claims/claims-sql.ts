// The claim statements of SqliteClaimStore (claims.ts). Since schema v3 a claim is the state
// columns of its fingerprint's row, and its result a row of `results` that tasks point at too.
// By name, for test/unit/engine/db/query-plans.test.ts.
export const CLAIM_SQL = {
  // A queued fingerprint never claimed yet is claimed at epoch 1 by one update of its row...
  claimQueued: `
    UPDATE fingerprints SET state = 'running', owner = ?, epoch = 1, lease_until = ?,
      claimed_at = ?
    WHERE fp = ? AND state IS NULL
    RETURNING epoch`,
  // ...one never seen (a claim without a task) by the atomic insert-or-ignore.
  claim: `
    INSERT INTO fingerprints(fp, state, owner, epoch, lease_until, claimed_at)
    VALUES (?, 'running', ?, 1, ?, ?)
    ON CONFLICT(fp) DO NOTHING`,
  select: `
    SELECT f.state, f.status, f.owner, f.epoch, f.lease_until, r.body AS result, f.result_id,
      f.cost_micros, f.completed_at
    FROM fingerprints f LEFT JOIN results r ON r.id = f.result_id WHERE f.fp = ?`,
  // A forecast's question, per distinct task: is an answer stored? Without the result's body.
  stored: `
    SELECT state, status, completed_at FROM fingerprints WHERE fp = ? AND state = 'completed'`,
  // Re-claiming reuses the row, never deletes it: the epoch keeps growing, so an owner from any
  // earlier round is fenced out for good.
  reclaim: `
    UPDATE fingerprints
    SET state = 'running', status = NULL, owner = ?, epoch = epoch + 1, lease_until = ?,
        result_id = NULL, cost_micros = NULL, claimed_at = ?, completed_at = NULL
    WHERE fp = ? AND epoch = ? AND state = ?`,
  takeOver: `
    UPDATE fingerprints SET owner = ?, epoch = epoch + 1, lease_until = ?, claimed_at = ?
    WHERE fp = ? AND state = 'running' AND epoch = ? AND lease_until < ?`,
  // A claim just made whose epoch a rolled-back transaction had handed out (lost-epochs.ts).
  raiseEpoch: `UPDATE fingerprints SET epoch = ? WHERE fp = ? AND epoch = ? AND state = 'running'`,
  renew: `UPDATE fingerprints SET lease_until = ? WHERE fp = ? AND epoch = ? AND state = 'running'`,
  insertResult: 'INSERT INTO results(body) VALUES (?)',
  dropResult: 'DELETE FROM results WHERE id = ?',
  complete: `
    UPDATE fingerprints SET state = 'completed', status = ?, result_id = ?, cost_micros = ?,
      completed_at = ?
    WHERE fp = ? AND epoch = ? AND state = 'running'`,
  resultRef: `SELECT result_id FROM fingerprints WHERE fp = ? AND state = 'completed'`,
  forgetFailure: `
    UPDATE fingerprints SET state = 'released', result_id = NULL
    WHERE fp = ? AND state = 'completed' AND status = 'failed'`,
  release: `
    UPDATE fingerprints SET state = 'released', lease_until = ?
    WHERE fp = ? AND epoch = ? AND state = 'running'`,
} as const
