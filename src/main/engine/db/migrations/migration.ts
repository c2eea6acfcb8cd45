/**
 * A numbered migration: applied once, in order, inside a transaction, and recorded in the
 * `migrations` table. Never edit a migration that has shipped: add the next number.
 */
export interface Migration {
  version: number
  name: string
  sql: string
}
