/**
 * An EventSource the test drives by hand, transition by transition, for the renderer's event
 * stream (event-stream.ts) and the HTTP client that composes it.
 */
import type { EventSourceLike } from '../../../src/renderer/src/event-stream'

export class ScriptedEventSource implements EventSourceLike {
  static all: ScriptedEventSource[] = []
  readyState = 0
  closed = false
  private listeners = new Map<string, ((event: { data: string }) => void)[]>()
  constructor(readonly url: string) {
    ScriptedEventSource.all.push(this)
  }
  /** The newest one made. */
  static last(): ScriptedEventSource {
    return ScriptedEventSource.all.at(-1)!
  }
  addEventListener(type: string, listener: (event: { data: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener])
  }
  close() {
    this.closed = true
    this.readyState = 2
  }
  fire(type: string, data = '', readyState = this.readyState) {
    this.readyState = readyState
    for (const l of this.listeners.get(type) ?? []) l({ data })
  }
  /** As a browser does: 'open' once connected, 'error' with CONNECTING (retrying) or CLOSED. */
  open() {
    this.fire('open', '', 1)
  }
  drop() {
    this.fire('error', '', 0)
  }
  giveUp() {
    this.fire('error', '', 2)
  }
}
