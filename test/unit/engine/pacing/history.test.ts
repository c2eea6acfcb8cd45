// The Concurrency chart's history (pacing/history.ts) on a real SQLite file: samples folded to one
// row per partition per second, the run's end kept as its own point, pauses with their reasons, a
// window read back bounded per partition, old rows pruned as new ones come.
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../../src/main/engine/db'
import { HISTORY_ROWS, PacingHistory, RETAIN_MS } from '../../../../src/main/engine/pacing/history'
import type { PartitionView } from '../../../../src/shared/contract'
import { file } from '../db/migration-files'

function snap(partition: string, inflight: number, throttles: number, limit = 4): PartitionView {
  return {
    partition,
    inflight,
    throttles,
    limit,
    concurrency: Math.floor(limit),
    waiting: 0,
  } as PartitionView
}

describe('pacing history', () => {
  it('folds samples per second, keeps the idle end, and reads a window back in order', () => {
    const db = openDatabase(file())
    const h = new PacingHistory(db)
    const t0 = 1_000_000
    h.record(t0 + 0, [snap('sim:a', 1, 0)])
    h.record(t0 + 200, [snap('sim:a', 3, 1)])
    h.record(t0 + 400, [snap('sim:a', 2, 3, 5)])
    h.record(t0 + 1200, [snap('sim:a', 2, 3)])
    h.record(t0 + 1400, [snap('sim:a', 0, 3)])
    h.flush(t0 + 1500)
    h.recordPause({
      partition: 'sim:a',
      ts: t0 + 300,
      until: t0 + 900,
      reason: 'paused until x (429 said wait 600 ms)',
    })
    const view = h.read(t0 - 1)
    expect(view.samples.map((s) => [s.ts, s.inflight, s.throttles, s.limit])).toEqual([
      [t0, 3, 3, 5],
      [t0 + 1000, 2, 0, 4],
      // The second ended idle: the run's end is its own point.
      [t0 + 2000, 0, 0, 4],
    ])
    expect(view.pauses).toEqual([
      {
        partition: 'sim:a',
        ts: t0 + 300,
        until: t0 + 900,
        reason: 'paused until x (429 said wait 600 ms)',
      },
    ])
    // A window that starts later leaves the earlier seconds out.
    expect(h.read(t0 + 1000).samples.map((s) => s.ts)).toEqual([t0 + 1000, t0 + 2000])
    db.close()
  })

  it('two processes in one second add up; rows older than the retention are pruned', () => {
    const db = openDatabase(file())
    const a = new PacingHistory(db)
    const b = new PacingHistory(db)
    const t0 = 5_000_000
    a.record(t0, [snap('sim:a', 2, 0)])
    b.record(t0 + 10, [snap('sim:a', 3, 0)])
    a.flush(t0 + 100)
    b.flush(t0 + 100)
    expect(a.read(0).samples.map((s) => s.inflight)).toEqual([5])
    const later = t0 + RETAIN_MS + 120_000
    a.record(later, [snap('sim:a', 1, 0)])
    a.flush(later + 100)
    expect(a.read(0).samples.map((s) => s.ts)).toEqual([later - (later % 1000)])
    db.close()
  })

  it('reads at most an hour of rows per partition, however many the table holds', () => {
    const db = openDatabase(file())
    const insert = db.prepare(`INSERT INTO pacing_samples VALUES (?, ?, 4, 4, 1, 0, 0)`)
    // 20 partitions x 10,000 seconds: 200,000 rows, far past an hour each.
    db.transaction(() => {
      for (let p = 0; p < 20; p++) {
        for (let s = 0; s < 10_000; s++) insert.run(`sim:m${p}`, s * 1000)
      }
    })()
    const h = new PacingHistory(db)
    const t = performance.now()
    const view = h.read(0)
    const ms = performance.now() - t
    const perPartition = new Map<string, number>()
    for (const s of view.samples)
      perPartition.set(s.partition, (perPartition.get(s.partition) ?? 0) + 1)
    expect(perPartition.size).toBe(20)
    for (const n of perPartition.values()) expect(n).toBe(HISTORY_ROWS)
    // The newest of each partition, oldest first.
    const first = view.samples.filter((s) => s.partition === 'sim:m0')
    expect(first[0]!.ts).toBe((10_000 - HISTORY_ROWS) * 1000)
    expect(first.at(-1)!.ts).toBe(9_999_000)
    console.log(`history read: ${view.samples.length} rows of 200,000 in ${ms.toFixed(1)} ms`)
    db.close()
  })
})
