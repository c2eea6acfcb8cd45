// The pacing records as the Redis store keeps them: the record's JSON in its partition's hash
// (everything but the version, a field of its own), and this process's copy of the latest one it
// read, so that a script seeing the version a worker knows can answer without the text.
import type { AimdParams, LimitChange } from '../core/types'
import type { ControllerState, PacingRecord } from './store'

/** The record as a hash keeps it: everything but the version, which is a field of its own. */
type StoredRecord = Omit<PacingRecord, 'version'>

/** The latest record read of each partition. */
export class RecordCache {
  readonly #records = new Map<string, PacingRecord>()

  get(partition: string): PacingRecord | undefined {
    return this.#records.get(partition)
  }

  /** The version this process knows, as a script's argument ('0': none). */
  known(partition: string): string {
    return String(this.#records.get(partition)?.version ?? 0)
  }

  parse(partition: string, version: number, json: string): PacingRecord {
    const cached = this.#records.get(partition)
    if (cached?.version === version) return cached
    // No text: the script saw this worker's known version, and the cache holds it or a later one.
    if (json === '' && cached) return cached
    if (json === '') throw new Error(`pacing partition ${partition}: record ${version} unread`)
    const record: PacingRecord = { ...(JSON.parse(json) as StoredRecord), version }
    this.#records.set(partition, record)
    return record
  }

  remember(record: PacingRecord): PacingRecord {
    this.#records.set(record.partition, record)
    return record
  }
}

/** The record as stored: its fields but the version, in a fixed order. */
export function stored(r: PacingRecord): string {
  const s: StoredRecord = {
    partition: r.partition,
    params: r.params as AimdParams,
    controller: r.controller as ControllerState,
    concurrency: r.concurrency,
    pausedUntil: r.pausedUntil,
    lastChange: r.lastChange as LimitChange | null,
    // The learned paces ride in the record's JSON: the scripts never look inside it.
    ...(r.learned ? { learned: r.learned } : {}),
  }
  return JSON.stringify(s)
}
