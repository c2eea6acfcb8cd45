// The CSV exports' columns: one line per ledger row ('events') or per task type ('summary').
import type { CsvColumn } from './csv'
import type { LedgerRow, TypeRollup } from './ledger'
import { microsToUsdString as usd } from '../../shared/money'

export const EVENT_COLUMNS: readonly CsvColumn<LedgerRow>[] = [
  { header: 'id', value: (r) => r.id },
  { header: 'ts', value: (r) => r.ts },
  // Finance reads dates, not epoch ms; UTC so the file means the same everywhere.
  { header: 'time_utc', value: (r) => new Date(r.ts).toISOString() },
  { header: 'task_id', value: (r) => r.taskId },
  { header: 'batch_id', value: (r) => r.batchId },
  { header: 'fp', value: (r) => r.fp },
  { header: 'worker', value: (r) => r.worker },
  { header: 'task_type', value: (r) => r.taskType },
  { header: 'provider', value: (r) => r.provider },
  { header: 'model', value: (r) => r.model },
  { header: 'step', value: (r) => r.step },
  { header: 'outcome', value: (r) => r.outcome },
  { header: 'input_tokens', value: (r) => r.inputTokens },
  { header: 'cached_input_tokens', value: (r) => r.cachedInputTokens },
  { header: 'cache_write_tokens', value: (r) => r.cacheWriteTokens },
  { header: 'output_tokens', value: (r) => r.outputTokens },
  { header: 'cost_usd', value: (r) => usd(r.costMicros), numeric: true },
  { header: 'saved_usd', value: (r) => usd(r.savedMicros), numeric: true },
  { header: 'latency_ms', value: (r) => r.latencyMs },
  { header: 'status', value: (r) => r.status },
  { header: 'epoch', value: (r) => r.epoch },
  { header: 'price_version', value: (r) => r.priceVersion },
]

export const SUMMARY_COLUMNS: readonly CsvColumn<TypeRollup>[] = [
  { header: 'task_type', value: (r) => r.taskType },
  { header: 'runs', value: (r) => r.runs },
  { header: 'executed', value: (r) => r.executed },
  { header: 'reused', value: (r) => r.reused },
  { header: 'duplicates', value: (r) => r.duplicates },
  { header: 'avg_input_tokens', value: (r) => r.avgInputTokens },
  { header: 'input_tokens', value: (r) => r.inputTokens },
  { header: 'cached_input_tokens', value: (r) => r.cachedInputTokens },
  { header: 'cache_write_tokens', value: (r) => r.cacheWriteTokens },
  { header: 'output_tokens', value: (r) => r.outputTokens },
  { header: 'total_tokens', value: (r) => r.totalTokens },
  { header: 'cost_usd', value: (r) => usd(r.costMicros), numeric: true },
  { header: 'unpriced_calls', value: (r) => r.unpricedCalls },
  { header: 'saved_usd', value: (r) => usd(r.savedMicros), numeric: true },
  { header: 'wasted_usd', value: (r) => usd(r.wastedMicros), numeric: true },
  { header: 'throttled', value: (r) => r.throttled },
  { header: 'errors', value: (r) => r.errors },
  { header: 'abandoned', value: (r) => r.abandoned },
]
