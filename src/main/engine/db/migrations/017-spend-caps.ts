import type { Migration } from './migration'

// Issue 21, the caps kept in the database (`pacer budgets set`): over a task type, a provider and
// model, or all spend, for all time or per calendar day or month in a time zone. A cap's spend is
// kept per period, charged in the transaction of each ledger row; a call's reservation (migration
// 14's row) holds its worst case under each cap that applies, in the period it was reserved in,
// so a call that crosses midnight settles in the day that admitted it.
export const spendCapsMigration: Migration = {
  version: 17,
  name: 'spend caps: caps per task type, model and calendar period, their spend and holds',
  sql: `
      CREATE TABLE spend_caps (
        id          INTEGER PRIMARY KEY,
        task_type   TEXT,              -- NULL: every task type
        provider    TEXT,              -- NULL: every provider (and model)
        model       TEXT,              -- NULL: every model of the provider
        period      TEXT NOT NULL,     -- 'total', 'day' or 'month'
        zone        TEXT NOT NULL,     -- IANA time zone of the calendar ('UTC' unless asked)
        cap_micros  INTEGER NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
      );
      CREATE TABLE spend_cap_periods (
        cap           INTEGER NOT NULL,  -- spend_caps.id
        period_key    TEXT NOT NULL,     -- '' (total), '2026-12-02' (day), '2026-12' (month)
        spent_micros  INTEGER NOT NULL DEFAULT 0,  -- the ledger rows' cost, charged with each row
        -- Calls a dead process had sent and never ledgered: billed or not, nobody knows; their
        -- worst case stays counted against the cap when their reservation is swept.
        presumed_micros INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (cap, period_key)
      ) WITHOUT ROWID;
      CREATE TABLE budget_holds (
        reservation  INTEGER NOT NULL,   -- budget_reservations.id
        cap          INTEGER NOT NULL,   -- spend_caps.id
        period_key   TEXT NOT NULL,
        micros       INTEGER NOT NULL,
        PRIMARY KEY (reservation, cap)
      ) WITHOUT ROWID;
      CREATE INDEX budget_holds_cap ON budget_holds(cap, period_key);
      -- The warning thresholds (50, 80, 100 %) already said, once per cap and period.
      CREATE TABLE spend_cap_alerts (
        cap         INTEGER NOT NULL,
        period_key  TEXT NOT NULL,
        percent     INTEGER NOT NULL,
        at          INTEGER NOT NULL,
        PRIMARY KEY (cap, period_key, percent)
      ) WITHOUT ROWID;
      -- 1 once the call's request went out (marked in the write of its journal intent): a dead
      -- worker's sent reservations may have been billed, its unsent ones were not.
      ALTER TABLE budget_reservations ADD COLUMN sent INTEGER NOT NULL DEFAULT 0;
    `,
}
