// A provider of the bench's family (bench/scheduler/family.ts) with everything fixed but what a
// test names: a concurrency cap of 4 for a minute, 429 with `retry-after: 1`, fixed 1 s latency.
import type { ProviderDraw } from '../../bench/scheduler/family'

export function familyDraw(over: Partial<ProviderDraw>): ProviderDraw {
  return {
    seed: 1,
    warmupMs: 0,
    binding: 'concurrency',
    phases: [{ fromMs: 0, value: 4 }],
    durationMs: 60_000,
    burst: 'minute',
    headers: 'none',
    lag: false,
    refusal: { status: 429, retry: 'one-second' },
    latency: { kind: 'fixed', medianMs: 1000 },
    tenant: null,
    charge: 'used',
    tasks: 100,
    ...over,
  }
}
