import type { Migration } from './migration'

// Issue 22, provider batch APIs. A submission is written before its request goes out and its
// remote id before the first poll: a process that dies anywhere after that resumes polling it
// instead of submitting the same work again. One row per request line, keyed by its custom_id
// (the hash of the request) and the submission that carried it, holds the answer once downloaded.
export const providerBatchesMigration: Migration = {
  version: 16,
  name: 'provider batches: the journal of submissions to the vendors batch APIs and their lines',
  sql: `
      CREATE TABLE provider_batches (
        id          INTEGER PRIMARY KEY,
        vendor      TEXT NOT NULL,     -- 'openai' (and compatible servers) | 'anthropic'
        endpoint    TEXT NOT NULL,     -- the live endpoint its calls would have gone to
        model       TEXT NOT NULL,
        remote_id   TEXT,              -- the vendor's batch id; NULL while being submitted
        input_file  TEXT,              -- OpenAI: the uploaded input file
        status      TEXT NOT NULL,     -- the vendor's last word ('submitting' before it has one)
        ended       INTEGER NOT NULL DEFAULT 0,  -- 1: its lines hold their answers
        requests    INTEGER NOT NULL,
        counts      TEXT,              -- the last request counts seen, as JSON
        created_at  INTEGER NOT NULL,
        polled_at   INTEGER,
        ended_at    INTEGER,
        error       TEXT
      );
      CREATE INDEX provider_batches_open ON provider_batches(ended);
      CREATE TABLE provider_batch_lines (
        custom_id   TEXT NOT NULL,
        submission  INTEGER NOT NULL,  -- provider_batches.id
        state       TEXT NOT NULL,     -- pending | succeeded | errored | expired | canceled
        status      INTEGER,           -- the HTTP status the line stands for
        body        TEXT,              -- its answer (or error) as the live endpoint sends it
        delivered   INTEGER NOT NULL DEFAULT 0,  -- handed to its call: a later call submits again
        PRIMARY KEY (custom_id, submission)
      ) WITHOUT ROWID;
      CREATE INDEX provider_batch_lines_submission ON provider_batch_lines(submission);
    `,
}
