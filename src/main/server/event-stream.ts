/**
 * GET /api/events: every engine event as Server-Sent Events (`event: <name>` + `data: <json>`),
 * with a named heartbeat so the console can tell a live stream from one that hangs.
 */
import type { ServerResponse } from 'node:http'
import { EVENTS } from '../../shared/contract'
import type { EventSubscribe } from '../transport/commands'

// A tab that stops reading (suspended, debugger paused) must not grow main's memory forever:
// past this much unsent event data the stream is dropped and EventSource reconnects.
const MAX_SSE_BACKLOG = 8 * 1024 * 1024

export interface EventStreams {
  /** Turns an authorized GET into a stream subscribed to every event until it closes. */
  open(res: ServerResponse): void
  /** Ends every open stream (server shutdown). */
  closeAll(): void
}

export function createEventStreams(subscribe: EventSubscribe, heartbeatMs: number): EventStreams {
  const streams = new Set<ServerResponse>()

  const open = (res: ServerResponse): void => {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    })
    res.write('retry: 2000\n\n')
    streams.add(res)
    const write = (chunk: string) => {
      if (res.writableEnded || res.destroyed) return
      if (res.writableLength > MAX_SSE_BACKLOG) {
        res.destroy()
        return
      }
      res.write(chunk)
    }
    const unsubscribes = EVENTS.map((name) =>
      subscribe(name, (payload) => {
        let data: string
        try {
          // JSON.stringify escapes newlines, so one `data:` line always holds the whole payload.
          data = JSON.stringify(payload)
        } catch (err) {
          console.error(`pacer: could not serialize ${name} event:`, err)
          return
        }
        write(`event: ${name}\ndata: ${data}\n\n`)
      }),
    )
    // A named event, not an SSE comment: EventSource hides comments from the page, and the
    // console needs to see the stream is alive to notice one that hangs without closing.
    const heartbeat = setInterval(() => write('event: heartbeat\ndata: {}\n\n'), heartbeatMs)
    heartbeat.unref()
    res.on('close', () => {
      clearInterval(heartbeat)
      for (const unsubscribe of unsubscribes) unsubscribe()
      streams.delete(res)
    })
  }

  return {
    open,
    closeAll() {
      for (const res of streams) res.end()
    },
  }
}
