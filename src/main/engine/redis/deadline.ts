// A deadline on every command to the team store. node-redis times a command out only while it waits
// to be written: once on the wire, a server that accepted the connection and never answers (a
// stopped process, a half-open socket) keeps it, and whoever awaits it, forever. This link races
// each command and script with a timer; the first one late marks the store as not answering
// (`isReady` false, so the stores wait for 'ready' as they do for a lost connection) and later
// commands fail at once instead of piling up behind it. The connection's replies come in order, so
// the late command's own answer (or the reconnect, if the socket drops) says the server answers
// again. What the late command did on the server is unknown, as with a connection lost on the
// way: the stores already treat it so (leases, fencing by epoch, the heartbeat's count of slots).
import { EventEmitter } from 'node:events'
import type { RedisLink } from './script-runner'

/** The store did not answer a command within the deadline (or an earlier one is still late). */
export class StoreNotAnswering extends Error {
  readonly code = 'ETIMEDOUT'
}

/** What the link needs of node-redis's client: its state, its commands, its 'ready' event. */
export interface RawRedisClient {
  readonly isReady: boolean
  sendCommand(args: string[]): Promise<unknown>
  on(event: 'ready', listener: () => void): unknown
}

type Method = (...args: unknown[]) => Promise<unknown>

/**
 * The client with a deadline on each command and script method. `onStall` hears the first command
 * that missed it; 'ready' is emitted when the server answers again (a late reply, or a reconnect).
 */
export class DeadlineLink extends EventEmitter implements RedisLink {
  readonly #client: RawRedisClient
  readonly #ms: number
  readonly #onStall: () => void
  #stalled = false

  constructor(
    client: RawRedisClient,
    ms: number,
    scriptMethods: readonly string[],
    onStall: () => void,
  ) {
    super()
    this.setMaxListeners(0)
    this.#client = client
    this.#ms = ms
    this.#onStall = onStall
    // Every reconnect is news to the stores (ScriptRunner re-checks the data's marker on it).
    client.on('ready', () => {
      this.#stalled = false
      this.emit('ready')
    })
    const raw = client as unknown as Record<string, Method>
    for (const name of scriptMethods) {
      const method = raw[name]
      if (typeof method !== 'function') continue
      Object.defineProperty(this, name, {
        value: (...args: unknown[]) => this.#timed(() => method.apply(client, args)),
      })
    }
  }

  get isReady(): boolean {
    return this.#client.isReady && !this.#stalled
  }

  /** True while a command is late: the connection is up but the server does not answer. */
  get stalled(): boolean {
    return this.#stalled
  }

  sendCommand(args: string[]): Promise<unknown> {
    return this.#timed(() => this.#client.sendCommand(args))
  }

  #timed(send: () => Promise<unknown>): Promise<unknown> {
    if (this.#stalled) {
      return Promise.reject(new StoreNotAnswering(`not answering for ${this.#ms / 1000} s`))
    }
    const sent = send()
    return new Promise((resolve, reject) => {
      let late = false
      const timer = setTimeout(() => {
        late = true
        // Before the rejection, so a caller that asks isReady in its catch waits for 'ready'.
        if (!this.#stalled) {
          this.#stalled = true
          this.#onStall()
        }
        reject(new StoreNotAnswering(`no answer within ${this.#ms / 1000} s`))
      }, this.#ms)
      timer.unref()
      sent.then(
        (value) => {
          clearTimeout(timer)
          if (late) this.#answered()
          else resolve(value)
        },
        (err: unknown) => {
          clearTimeout(timer)
          if (late) this.#answered()
          else reject(err)
        },
      )
    })
  }

  #answered(): void {
    // A late command rejected by a dropped socket is no answer: the reconnect's 'ready' is.
    if (!this.#stalled || !this.#client.isReady) return
    this.#stalled = false
    this.emit('ready')
  }
}

/** Resolves with `work`'s value, or rejects with `onLate()` after `ms`. */
export function within<T>(work: Promise<T>, ms: number, onLate: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onLate()), ms)
    timer.unref()
    work.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (err: unknown) => {
        clearTimeout(timer)
        reject(err)
      },
    )
  })
}
