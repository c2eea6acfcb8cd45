// The headless transport end to end: a real node:http server on a free loopback port, real fetch
// and raw node:http requests (for the Host header and unnormalized paths fetch would fix up).
// Here the events: Server-Sent Events with the token, heartbeats, unsubscribing, close().
import { describe, expect, it } from 'vitest'
import { EVENTS, type TypeRollupView } from '../../../src/shared/contract'
import { until } from '../../helpers/until'
import { base, engine, readEvents, server, start, useHttpServer } from './http-server-harness'

useHttpServer()

const totals: TypeRollupView = {
  taskType: '*',
  runs: 3,
  executed: 2,
  reused: 1,
  duplicates: 0,
  avgInputTokens: 100,
  inputTokens: 300,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheSavedMicros: 0,
  cacheWriteExtraMicros: 0,
  outputTokens: 30,
  totalTokens: 330,
  costMicros: 4200,
  unpricedCalls: 0,
  savedMicros: 1400,
  wastedMicros: 0,
  throttled: 0,
  errors: 0,
  abandoned: 0,
  estimatedCalls: 0,
  replayed: 0,
  batchCalls: 0,
  batchCostMicros: 0,
  batchSavedMicros: 0,
}

describe('startHttpServer: events (SSE)', () => {
  it('refuses a stream without the token', async () => {
    await start()
    const res = await fetch(`${base}/api/events`)
    expect(res.status).toBe(401)
  })

  it('delivers an emitted event to a stream opened with ?token=', async () => {
    await start()
    const res = await fetch(`${base}/api/events?token=${server.token}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    // The server subscribes before it answers the headers: an event emitted now must arrive.
    const events = await readEvents(res, 1, () => engine.emit('ledger:changed', { totals }))
    expect(events).toEqual([{ event: 'ledger:changed', data: { totals } }])
  })

  it('accepts the token as a bearer header and sends heartbeat events the page can see', async () => {
    await start({ heartbeatMs: 30 })
    const res = await fetch(`${base}/api/events`, {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    const events = await readEvents(res, 2)
    expect(events).toEqual([
      { event: 'heartbeat', data: {} },
      { event: 'heartbeat', data: {} },
    ])
  })

  it('unsubscribes from the engine when the client goes away', async () => {
    await start()
    expect(engine.listenerCount()).toBe(0)
    const controller = new AbortController()
    const res = await fetch(`${base}/api/events?token=${server.token}`, {
      signal: controller.signal,
    })
    expect(res.status).toBe(200)
    await until(() => engine.listenerCount() === EVENTS.length)
    controller.abort()
    await until(() => engine.listenerCount() === 0)
    expect(engine.listenerCount()).toBe(0)
  })

  it('close() ends open streams instead of hanging', async () => {
    await start()
    const res = await fetch(`${base}/api/events?token=${server.token}`)
    await until(() => engine.listenerCount() === EVENTS.length)
    const reading = readEvents(res, 5).catch(() => [])
    await server.close()
    await reading
    expect(engine.listenerCount()).toBe(0)
  })
})
