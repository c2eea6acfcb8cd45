// One file per migration, numbered as applied; views.ts holds the views several of them make.
import { initialMigration } from './001-initial'
import { batchDriverMigration } from './002-batch-driver'
import { pacingPartitionsMigration } from './003-pacing-partitions'
import { ledgerRollupsMigration } from './004-ledger-rollups'
import { compactStorageMigration } from './005-compact-storage'
import { paramsAndEstimatesMigration } from './006-params-and-estimates'
import { ledgerCacheEffectMigration } from './007-ledger-cache-effect'
import { failuresMigration } from './008-failures'
import { callJournalMigration } from './009-call-journal'
import { workersMigration } from './010-workers'
import { batchAgentsMigration } from './011-batch-agents'
import { ledgerSourceMigration } from './012-ledger-source'
import { pacingRateBudgetMigration } from './013-pacing-rate-budget'
import { spendBudgetsMigration } from './014-spend-budgets'
import { pacingHistoryMigration } from './015-pacing-history'
import { providerBatchesMigration } from './016-provider-batches'
import { spendCapsMigration } from './017-spend-caps'
import { batchApiRunsMigration } from './018-batch-api-runs'
import { pacingLearnedMigration } from './019-pacing-learned'
import { ledgerBatchSavedMigration } from './020-ledger-batch-saved'
import type { Migration } from './migration'

export type { Migration } from './migration'

/** Every migration of the schema, in the order they are applied. */
export const MIGRATIONS: readonly Migration[] = [
  initialMigration,
  batchDriverMigration,
  pacingPartitionsMigration,
  ledgerRollupsMigration,
  compactStorageMigration,
  paramsAndEstimatesMigration,
  ledgerCacheEffectMigration,
  failuresMigration,
  callJournalMigration,
  workersMigration,
  batchAgentsMigration,
  ledgerSourceMigration,
  pacingRateBudgetMigration,
  spendBudgetsMigration,
  pacingHistoryMigration,
  providerBatchesMigration,
  spendCapsMigration,
  batchApiRunsMigration,
  pacingLearnedMigration,
  ledgerBatchSavedMigration,
]
