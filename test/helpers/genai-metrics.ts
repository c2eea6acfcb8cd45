// The GenAI client metrics a loopback receiver got, checked against the ledger they came from.
import { expect } from 'vitest'
import { latestPoints, type ReceivedPoint } from './otlp-receiver'

/** The ledger columns the metrics are made of. */
export interface CallLedgerRow {
  input_tokens: number
  output_tokens: number
  latency_ms: number | null
  outcome: string
  model: string
}

/** The conventions' recommended buckets (gen-ai-metrics v1.45.0). */
const TOKEN_BOUNDS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]
const DURATION_BOUNDS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]

/**
 * Both histograms against the ledger: one record per provider call (a ledger row that is not a
 * reuse or a journal replay), token sums equal to its input (cached included) and output totals,
 * durations of its latencies, error.type on the throttled ones.
 */
export function checkGenAiMetrics(received: ReceivedPoint[], rows: CallLedgerRow[]): void {
  const calls = rows.filter((r) => r.outcome !== 'reused' && r.outcome !== 'replayed')
  expect(calls.length).toBeGreaterThan(0)
  const points = latestPoints(received)
  const total = (ps: ReceivedPoint[]) => ({
    count: ps.reduce((n, p) => n + p.count, 0),
    sum: ps.reduce((n, p) => n + p.sum, 0),
  })
  const tokens = points.filter((p) => p.metric === 'gen_ai.client.token.usage')
  const durations = points.filter((p) => p.metric === 'gen_ai.client.operation.duration')
  for (const p of [...tokens, ...durations]) {
    expect(p.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'pacer.sim',
    })
    expect(p.attributes['gen_ai.request.model']).toBe(p.attributes['gen_ai.response.model'])
    expect(rows.map((r) => r.model)).toContain(p.attributes['gen_ai.request.model'])
    // Every record lands in a bucket: the bucket counts add up to the count.
    expect(p.bucketCounts.reduce((a, b) => a + b, 0)).toBe(p.count)
  }
  for (const p of tokens) {
    expect(p.unit).toBe('{token}')
    expect(p.explicitBounds).toEqual(TOKEN_BOUNDS)
  }
  const ofType = (type: string) => tokens.filter((p) => p.attributes['gen_ai.token.type'] === type)
  expect(total(ofType('input'))).toEqual({
    count: calls.length,
    sum: calls.reduce((n, r) => n + r.input_tokens, 0),
  })
  expect(total(ofType('output'))).toEqual({
    count: calls.length,
    sum: calls.reduce((n, r) => n + r.output_tokens, 0),
  })
  expect(total(ofType('input')).sum).toBeGreaterThan(0)
  for (const p of durations) {
    expect(p.unit).toBe('s')
    expect(p.explicitBounds).toEqual(DURATION_BOUNDS)
  }
  const timed = calls.filter((r) => r.latency_ms !== null)
  const d = total(durations)
  expect(d.count).toBe(timed.length)
  expect(d.sum).toBeCloseTo(timed.reduce((n, r) => n + r.latency_ms!, 0) / 1000, 6)
  // error.type on the durations of failed calls only (the simulated provider throttles at times).
  const failed = durations.filter((p) => p.attributes['error.type'] !== undefined)
  expect(total(failed).count).toBe(timed.filter((r) => r.outcome === 'throttled').length)
  expect(tokens.every((p) => p.attributes['error.type'] === undefined)).toBe(true)
}
