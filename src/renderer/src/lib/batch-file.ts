import type { BatchFormat } from '../../../shared/contract'

/** The batch file formats the engine reads, chosen by file extension. */
export function batchFormatOf(fileName: string): BatchFormat | null {
  const lower = fileName.toLowerCase()
  if (lower.endsWith('.csv')) return 'csv'
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl'
  return null
}

export const BATCH_FILE_ACCEPT = '.jsonl,.ndjson,.csv'
