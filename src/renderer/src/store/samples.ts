/**
 * Live scheduler samples, kept out of React state on purpose: they arrive several times a second
 * per partition, and putting each one in the store would re-render every subscriber. Each
 * partition gets a fixed-size ring of typed arrays; charts read it on requestAnimationFrame and
 * only a version counter tells them something changed.
 */
import type { PartitionView, SchedulerSample } from '../../../shared/contract'

/**
 * The engine samples 5 times a second and the database keeps one a second: this holds the chart's
 * widest window (an hour) of history, or ~80 min of live samples.
 */
const CAPACITY = 24_576

export class SampleRing {
  readonly ts = new Float64Array(CAPACITY)
  readonly limit = new Float64Array(CAPACITY)
  readonly concurrency = new Float64Array(CAPACITY)
  readonly inflight = new Float64Array(CAPACITY)
  readonly throttles = new Float64Array(CAPACITY)
  /** Next write position. */
  private head = 0
  /** Samples currently held (≤ CAPACITY). */
  size = 0
  /** Samples ever received from the engine (seeds not counted): the chart's data-samples. */
  received = 0
  /** Bumped on every push, so a reader knows whether to redraw. */
  version = 0

  /** The newest sample's time, or null when there is none. */
  get lastTs(): number | null {
    return this.size === 0 ? null : (this.ts[(this.head - 1 + CAPACITY) % CAPACITY] ?? null)
  }

  /** The oldest sample's time, or null when there is none. */
  get firstTs(): number | null {
    return this.size === 0 ? null : (this.ts[(this.head - this.size + CAPACITY) % CAPACITY] ?? null)
  }

  /**
   * Samples the database kept (`scheduler:history`), merged in time order with what the ring holds:
   * live samples may have arrived before the history's reply. Not counted as received.
   */
  merge(history: readonly SchedulerSample[]): void {
    if (history.length === 0) return
    const held: { s: SchedulerSample; seed: boolean }[] = []
    const start = (this.head - this.size + CAPACITY) % CAPACITY
    for (let k = 0; k < this.size; k++) {
      const i = (start + k) % CAPACITY
      held.push({
        s: {
          partition: '',
          ts: this.ts[i] ?? 0,
          limit: this.limit[i] ?? 0,
          concurrency: this.concurrency[i] ?? 0,
          inflight: this.inflight[i] ?? 0,
          waiting: 0,
          throttles: this.throttles[i] ?? 0,
        },
        seed: true,
      })
    }
    const seen = new Set(held.map((h) => h.s.ts))
    const all = [...held, ...history.filter((s) => !seen.has(s.ts)).map((s) => ({ s, seed: true }))]
    all.sort((a, b) => a.s.ts - b.s.ts)
    const received = this.received
    this.head = 0
    this.size = 0
    for (const { s, seed } of all.slice(-CAPACITY)) this.push(s, seed)
    this.received = received
  }

  /** The newest sample's time with calls in flight or throttled; 0 when none. */
  lastBusyTs(): number {
    const start = (this.head - this.size + CAPACITY) % CAPACITY
    for (let k = this.size - 1; k >= 0; k--) {
      const i = (start + k) % CAPACITY
      if ((this.inflight[i] ?? 0) > 0 || (this.throttles[i] ?? 0) > 0) return this.ts[i] ?? 0
    }
    return 0
  }

  /** `seed`: a point made from a scheduler snapshot rather than sent by the engine. */
  push(s: SchedulerSample, seed = false): void {
    const i = this.head
    this.ts[i] = s.ts
    this.limit[i] = s.limit
    this.concurrency[i] = s.concurrency
    this.inflight[i] = s.inflight
    this.throttles[i] = s.throttles
    this.head = (i + 1) % CAPACITY
    if (this.size < CAPACITY) this.size++
    if (!seed) this.received++
    this.version++
  }

  /**
   * The samples from `sinceMs` on, oldest first, as plain arrays (uPlot's data shape). The last
   * sample before `sinceMs` is carried in at `sinceMs`: a step chart's value at its left edge is
   * the last one known, so an idle partition still draws its line. Times only go forward: a
   * sample older than one already taken (a seed stamped by this page's clock just after the
   * engine's) is skipped, as uPlot needs sorted x values.
   */
  since(sinceMs: number): {
    ts: number[]
    limit: number[]
    concurrency: number[]
    inflight: number[]
    throttles: number[]
  } {
    const out = { ts: [], limit: [], concurrency: [], inflight: [], throttles: [] } as {
      ts: number[]
      limit: number[]
      concurrency: number[]
      inflight: number[]
      throttles: number[]
    }
    const start = (this.head - this.size + CAPACITY) % CAPACITY
    let before = -1
    let lastTs = -Infinity
    for (let k = 0; k < this.size; k++) {
      const i = (start + k) % CAPACITY
      const ts = this.ts[i] ?? 0
      if (ts < sinceMs) {
        before = i
        continue
      }
      if (ts < lastTs) continue
      if (before >= 0 && out.ts.length === 0 && ts > sinceMs) {
        this.#take(out, before, sinceMs, 0)
        before = -1
      }
      this.#take(out, i, ts, this.throttles[i] ?? 0)
      lastTs = ts
    }
    if (before >= 0 && out.ts.length === 0) this.#take(out, before, sinceMs, 0)
    return out
  }

  #take(out: ReturnType<SampleRing['since']>, i: number, ts: number, throttles: number): void {
    out.ts.push(ts)
    out.limit.push(this.limit[i] ?? 0)
    out.concurrency.push(this.concurrency[i] ?? 0)
    out.inflight.push(this.inflight[i] ?? 0)
    out.throttles.push(throttles)
  }
}

const rings = new Map<string, SampleRing>()

export function ringFor(partition: string): SampleRing {
  let ring = rings.get(partition)
  if (!ring) {
    ring = new SampleRing()
    rings.set(partition, ring)
  }
  return ring
}

/** Appends a batch of samples; returns the partitions that had none before (new charts). */
export function pushSamples(samples: readonly SchedulerSample[]): string[] {
  const fresh: string[] = []
  for (const s of samples) {
    if (!rings.has(s.partition)) fresh.push(s.partition)
    ringFor(s.partition).push(s)
  }
  return fresh
}

/** Merges what the database kept into each partition's ring (the chart's opening history). */
export function mergeHistory(samples: readonly SchedulerSample[]): void {
  const byPartition = new Map<string, SchedulerSample[]>()
  for (const s of samples) {
    const list = byPartition.get(s.partition) ?? []
    list.push(s)
    byPartition.set(s.partition, list)
  }
  for (const [partition, list] of byPartition) ringFor(partition).merge(list)
}

/**
 * When each partition was last busy (calls in flight, waiting or throttled), from the samples it
 * holds: the Concurrency view lists the busiest first.
 */
export function lastBusy(partition: string): number {
  return rings.get(partition)?.lastBusyTs() ?? 0
}

/** A seed is added when the newest sample is older than this (or there is none). */
const SEED_AFTER_MS = 1000

/**
 * Adds each partition's current state as a point, unless the engine sent one just now. The engine
 * only samples while a partition is busy, so a page opened on an idle engine has nothing to draw.
 */
export function seedSamples(partitions: readonly PartitionView[], now: number): void {
  for (const p of partitions) {
    const ring = ringFor(p.partition)
    const last = ring.lastTs
    if (last !== null && last >= now - SEED_AFTER_MS) continue
    ring.push(
      {
        partition: p.partition,
        ts: now,
        limit: p.limit,
        concurrency: p.concurrency,
        inflight: p.inflight,
        waiting: p.waiting,
        throttles: 0,
      },
      true,
    )
  }
}
