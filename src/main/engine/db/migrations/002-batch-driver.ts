import type { Migration } from './migration'

export const batchDriverMigration: Migration = {
  version: 2,
  name: 'batches.driver: the CLI process that runs a batch; the console runs only its own',
  sql: `
      -- NULL: a console batch, run by whichever console engine is up. Otherwise the worker id of
      -- the \`pacer run\` process that queued it, with its own keys and limits: consoles leave it
      -- alone unless the operator resumes it from the console (which clears the driver).
      ALTER TABLE batches ADD COLUMN driver TEXT;
    `,
}
