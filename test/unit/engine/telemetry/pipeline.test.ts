// The pipeline's promise to a run: what the collector accepted is counted, what it did not is
// dropped and counted, and closing takes no longer than its bound whatever the collector does.
import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { OtlpPipeline } from '../../../../src/main/engine/telemetry/pipeline'
import { startOtlpReceiver } from '../../../helpers/otlp-receiver'

async function endSpans(p: OtlpPipeline, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    p.tracer.startSpan(`s${i}`, { startTime: 1_700_000_000_000 + i }).end(1_700_000_000_010 + i)
    p.noteEnded()
  }
}

describe('OtlpPipeline', () => {
  it('counts what a collector accepted, with the ids chosen for each span', async () => {
    const receiver = await startOtlpReceiver()
    try {
      const p = await OtlpPipeline.open({
        url: `${receiver.url}/v1/traces`,
        metricsUrl: null,
        protocol: 'http/json',
        headers: {},
      })
      p.ids.choose('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331')
      await endSpans(p, 3)
      const counts = await p.close(5000)
      expect(counts).toEqual({ ended: 3, delivered: 3, dropped: 0 })
      expect(receiver.spans.map((s) => s.name).sort()).toEqual(['s0', 's1', 's2'])
      const first = receiver.spans.find((s) => s.name === 's0')!
      expect(first).toMatchObject({
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
      })
      expect(first.startMs).toBe(1_700_000_000_000)
    } finally {
      await receiver.close()
    }
  })

  it('drops and counts when nothing listens, and closes within its bound', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    await new Promise<void>((resolve) => server.close(() => resolve()))
    const p = await OtlpPipeline.open(
      {
        url: `http://127.0.0.1:${port}/v1/traces`,
        // Metrics to the same dead port: their close is within the same bound.
        metricsUrl: `http://127.0.0.1:${port}/v1/metrics`,
        protocol: 'http/protobuf',
        headers: {},
      },
      { exportTimeoutMs: 300, maxQueueSize: 2 },
    )
    // More than the queue holds: the processor drops the rest at once, and they count too.
    await endSpans(p, 5)
    p.recordCall({
      attributes: { 'gen_ai.operation.name': 'chat' },
      inputTokens: 10,
      outputTokens: 5,
      seconds: 0.5,
      errorType: undefined,
    })
    const t0 = performance.now()
    const counts = await p.close(400)
    expect(performance.now() - t0).toBeLessThan(1000)
    expect(counts).toEqual({ ended: 5, delivered: 0, dropped: 5 })
  })
})
