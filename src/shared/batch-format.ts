import type { BatchFormat } from './contract'

/** The batch file extensions Pacer knows, and the format each one is. */
const EXTENSIONS: Readonly<Record<string, BatchFormat>> = Object.freeze({
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.csv': 'csv',
})

/** For a file picker's `accept`: '.jsonl,.ndjson,.csv'. */
export const BATCH_FILE_ACCEPT = Object.keys(EXTENSIONS).join(',')

/** The format a file name's extension says (any case), or null when it names none. */
export function batchFormatOf(fileName: string): BatchFormat | null {
  const lower = fileName.toLowerCase()
  for (const [extension, format] of Object.entries(EXTENSIONS)) {
    if (lower.endsWith(extension)) return format
  }
  return null
}

/**
 * The format the engine reads a file in when the caller names none: what its extension says, and
 * JSONL for any other name (one JSON task per line is the default batch format).
 */
export function formatFromName(fileName: string): BatchFormat {
  return batchFormatOf(fileName) ?? 'jsonl'
}
