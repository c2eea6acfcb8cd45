import type { Migration } from './migration'

export const batchAgentsMigration: Migration = {
  version: 11,
  name: "agents: the agent module a batch's tasks run (path, identity, task types)",
  // JSON (agents/registry.ts BatchAgents); null: every task runs the built-in loop.
  sql: 'ALTER TABLE batches ADD COLUMN agents TEXT;',
}
