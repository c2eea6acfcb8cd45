import type { Migration } from './migration'

export const ledgerSourceMigration: Migration = {
  version: 12,
  name: "ledger source: the database's stable id, with the machine the team ledger's source of its rows",
  // team-ledger/source.ts: drawn once, here, so every process on the file appends as one source.
  sql: `CREATE TABLE ledger_source (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        id  TEXT NOT NULL
      );
      INSERT INTO ledger_source (one, id) VALUES (1, lower(hex(randomblob(8))));`,
}
