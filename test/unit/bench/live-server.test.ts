/**
 * The live leg's loopback provider (bench/pacing-live/server.ts) starts its draw's clock at the
 * first call, as the draw's virtual-time twin starts at its first admission: started with the
 * server, it ran ahead of the `pacer run` process by the process's own start, and on phases of a
 * second that alone parted live from virtual time (#100004, 25 points). Real loopback HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { drawFamily } from '../../../bench/scheduler/family-race'
import { drawTasks } from '../../../bench/scheduler/family'
import {
  LIVE_SCHEDULE_MS,
  LIVE_WARMUP_MS,
  batchLines,
  shortDraw,
} from '../../../bench/pacing-live/draws'
import { liveServer, type LiveServer } from '../../../bench/pacing-live/server'

let server: LiveServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe("the live leg's server", () => {
  it("starts the draw's clock at the first call, not when it starts listening", async () => {
    // #100005: slots 2 > 1, answers of about 270 ms.
    const draw = shortDraw(drawFamily(12, 1)[1]!, LIVE_SCHEDULE_MS, LIVE_WARMUP_MS)
    server = await liveServer(draw)
    const listening = Date.now()
    let first: number | undefined
    void server.firstCall.then((at) => (first = at))
    // A process takes a while to start: the server waits for it, its clock not running.
    while (Date.now() < listening + 30) await new Promise((r) => setTimeout(r, 10))
    expect(first).toBeUndefined()

    const line = batchLines(draw, drawTasks(draw))[0] as { payload: { prompt: string } }
    const sentAt = Date.now()
    const res = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'live',
        messages: [{ role: 'user', content: line.payload.prompt }],
      }),
    })
    expect(res.status).toBe(200)
    expect(await server.firstCall).toBeGreaterThanOrEqual(sentAt)
    expect(server.answered.get(0)).toBe(1)
    expect(server.attempts).toBe(1)
  })
})
