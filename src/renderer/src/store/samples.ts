/**
 * Live scheduler samples, kept out of React state on purpose: they arrive several times a second
 * per partition, and putting each one in the store would re-render every subscriber. Each
 * partition gets a fixed-size ring of typed arrays; charts read it on requestAnimationFrame and
 * only a version counter tells them something changed.
 */
import type { SchedulerSample } from '../../../shared/contract'

/** ~2 min of samples at up to 30 per second, with room to spare. */
const CAPACITY = 4096

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
  /** Samples ever received: what end-to-end tests read from the chart's data-samples. */
  received = 0
  /** Bumped on every push, so a reader knows whether to redraw. */
  version = 0

  push(s: SchedulerSample): void {
    const i = this.head
    this.ts[i] = s.ts
    this.limit[i] = s.limit
    this.concurrency[i] = s.concurrency
    this.inflight[i] = s.inflight
    this.throttles[i] = s.throttles
    this.head = (i + 1) % CAPACITY
    if (this.size < CAPACITY) this.size++
    this.received++
    this.version++
  }

  /** Copies samples with ts >= since, oldest first, into plain arrays (uPlot's data shape). */
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
    for (let k = 0; k < this.size; k++) {
      const i = (start + k) % CAPACITY
      const ts = this.ts[i] ?? 0
      if (ts < sinceMs) continue
      out.ts.push(ts)
      out.limit.push(this.limit[i] ?? 0)
      out.concurrency.push(this.concurrency[i] ?? 0)
      out.inflight.push(this.inflight[i] ?? 0)
      out.throttles.push(this.throttles[i] ?? 0)
    }
    return out
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

export function samplePartitions(): string[] {
  return [...rings.keys()]
}
