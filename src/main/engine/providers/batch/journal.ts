// The provider-batch journal (migration 015): submissions and their lines, so a submission happens
// once however the process ends, and a rerun resumes polling what is already at the vendor.
import type Database from 'better-sqlite3'

export type Vendor = 'openai' | 'anthropic'

export type LineState = 'pending' | 'succeeded' | 'errored' | 'expired' | 'canceled'

/** One submission as journaled. */
export interface Submission {
  id: number
  vendor: Vendor
  endpoint: string
  model: string
  remoteId: string | null
  inputFile: string | null
  status: string
  ended: boolean
  requests: number
  counts: Record<string, number> | null
  createdAt: number
  polledAt: number | null
  endedAt: number | null
  error: string | null
  /** The Pacer batch whose calls it carries (null: journaled before migration 18). */
  batchId: string | null
}

/** A line's latest state: the submission that carries it, and its answer once ended. */
export interface JournalLine {
  customId: string
  submission: number
  state: LineState
  status: number | null
  body: string | null
  delivered: boolean
}

interface SubmissionRow {
  id: number
  vendor: Vendor
  endpoint: string
  model: string
  remote_id: string | null
  input_file: string | null
  status: string
  ended: number
  requests: number
  counts: string | null
  created_at: number
  polled_at: number | null
  ended_at: number | null
  error: string | null
  batch_id: string | null
}

interface LineRow {
  custom_id: string
  submission: number
  state: LineState
  status: number | null
  body: string | null
  delivered: number
}

function toLine(r: LineRow): JournalLine {
  return {
    customId: r.custom_id,
    submission: r.submission,
    state: r.state,
    status: r.status,
    body: r.body,
    delivered: r.delivered === 1,
  }
}

function toSubmission(r: SubmissionRow): Submission {
  return {
    id: r.id,
    vendor: r.vendor,
    endpoint: r.endpoint,
    model: r.model,
    remoteId: r.remote_id,
    inputFile: r.input_file,
    status: r.status,
    ended: r.ended === 1,
    requests: r.requests,
    counts: r.counts === null ? null : (JSON.parse(r.counts) as Record<string, number>),
    createdAt: r.created_at,
    polledAt: r.polled_at,
    endedAt: r.ended_at,
    error: r.error,
    batchId: r.batch_id,
  }
}

/** What the vendor answered for one line, as stored. */
export interface LineAnswer {
  customId: string
  state: Exclude<LineState, 'pending'>
  status: number
  body: string
}

export class BatchJournal {
  readonly #db: Database.Database
  readonly #s

  constructor(db: Database.Database) {
    this.#db = db
    this.#s = {
      insertSubmission: db.prepare(
        `INSERT INTO provider_batches (vendor, endpoint, model, status, requests, created_at, batch_id)
         VALUES (?, ?, ?, 'submitting', ?, ?, ?)`,
      ),
      insertLine: db.prepare(
        `INSERT OR REPLACE INTO provider_batch_lines (custom_id, submission, state) VALUES (?, ?, 'pending')`,
      ),
      latestLine: db.prepare(
        `SELECT custom_id, submission, state, status, body, delivered FROM provider_batch_lines
         WHERE custom_id = ? ORDER BY submission DESC LIMIT 1`,
      ),
      submission: db.prepare('SELECT * FROM provider_batches WHERE id = ?'),
      all: db.prepare('SELECT * FROM provider_batches ORDER BY id DESC LIMIT ?'),
      ofBatch: db.prepare('SELECT * FROM provider_batches WHERE batch_id = ? ORDER BY id'),
      open: db.prepare('SELECT * FROM provider_batches WHERE ended = 0 ORDER BY id'),
      byRemote: db.prepare('SELECT * FROM provider_batches WHERE remote_id = ?'),
      submitted: db.prepare(
        `UPDATE provider_batches SET remote_id = ?, input_file = ?, status = ? WHERE id = ?`,
      ),
      polled: db.prepare(
        'UPDATE provider_batches SET status = ?, counts = ?, polled_at = ? WHERE id = ?',
      ),
      ended: db.prepare(
        `UPDATE provider_batches SET ended = 1, status = ?, ended_at = ?, error = ? WHERE id = ?`,
      ),
      answer: db.prepare(
        `UPDATE provider_batch_lines SET state = ?, status = ?, body = ?
         WHERE custom_id = ? AND submission = ?`,
      ),
      unanswered: db.prepare(
        `UPDATE provider_batch_lines SET state = ?, status = ?, body = ?
         WHERE submission = ? AND state = 'pending'`,
      ),
      deliver: db.prepare(
        'UPDATE provider_batch_lines SET delivered = 1 WHERE custom_id = ? AND submission = ?',
      ),
      lines: db.prepare(
        `SELECT custom_id, submission, state, status, body, delivered FROM provider_batch_lines
         WHERE submission = ?`,
      ),
      lineCounts: db.prepare(
        `SELECT state, COUNT(*) AS n FROM provider_batch_lines WHERE submission = ? GROUP BY state`,
      ),
    }
  }

  /**
   * Journals a submission and its lines, before anything is sent: one transaction. `batchId`:
   * the Pacer batch whose calls it carries.
   */
  begin(
    s: { vendor: Vendor; endpoint: string; model: string },
    customIds: readonly string[],
    now: number,
    batchId: string | null = null,
  ): number {
    return this.#db.transaction(() => {
      const id = Number(
        this.#s.insertSubmission.run(s.vendor, s.endpoint, s.model, customIds.length, now, batchId)
          .lastInsertRowid,
      )
      for (const c of customIds) this.#s.insertLine.run(c, id)
      return id
    })()
  }

  /** The vendor accepted it: its id, written before the first poll. */
  submitted(id: number, remoteId: string, inputFile: string | null, status: string): void {
    this.#s.submitted.run(remoteId, inputFile, status, id)
  }

  polled(id: number, status: string, counts: Record<string, number> | null, now: number): void {
    this.#s.polled.run(status, counts === null ? null : JSON.stringify(counts), now, id)
  }

  /**
   * The results are in: every line's answer, and the lines the vendor did not answer given
   * `rest` (expired, canceled, or the submission's refusal), with the submission ended: one
   * transaction, so a crash leaves it either polling or whole.
   */
  end(
    id: number,
    status: string,
    answers: readonly LineAnswer[],
    rest: Omit<LineAnswer, 'customId'>,
    now: number,
    error: string | null = null,
  ): void {
    this.#db.transaction(() => {
      for (const a of answers) this.#s.answer.run(a.state, a.status, a.body, a.customId, id)
      this.#s.unanswered.run(rest.state, rest.status, rest.body, id)
      this.#s.ended.run(status, now, error, id)
    })()
  }

  latest(customId: string): JournalLine | undefined {
    const r = this.#s.latestLine.get(customId) as LineRow | undefined
    return r && toLine(r)
  }

  /** Marks a line handed to its call: its answer is on the ledger from now on. */
  delivered(customId: string, submission: number): void {
    this.#s.deliver.run(customId, submission)
  }

  submission(id: number): Submission | undefined {
    const r = this.#s.submission.get(id) as SubmissionRow | undefined
    return r && toSubmission(r)
  }

  byRemoteId(remoteId: string): Submission | undefined {
    const r = this.#s.byRemote.get(remoteId) as SubmissionRow | undefined
    return r && toSubmission(r)
  }

  /** The newest submissions first. */
  list(limit = 100): Submission[] {
    return (this.#s.all.all(limit) as SubmissionRow[]).map(toSubmission)
  }

  /** The submissions that carried a Pacer batch's calls, oldest first. */
  ofBatch(batchId: string): Submission[] {
    return (this.#s.ofBatch.all(batchId) as SubmissionRow[]).map(toSubmission)
  }

  /** Submissions whose results are not in yet. */
  open(): Submission[] {
    return (this.#s.open.all() as SubmissionRow[]).map(toSubmission)
  }

  /** Every line of a submission. */
  lines(id: number): JournalLine[] {
    return (this.#s.lines.all(id) as LineRow[]).map(toLine)
  }

  /** How its lines stand, by state. */
  lineCounts(id: number): Record<string, number> {
    const out: Record<string, number> = {}
    for (const r of this.#s.lineCounts.all(id) as { state: string; n: number }[]) out[r.state] = r.n
    return out
  }
}
