// Lua scripts on a Redis connection by their hash (EVALSHA), the source sent once when the server
// does not know it (yet, or again after a restart), and the wait for a connection that is out of
// reach: what the claim store's operations share (claims-redis.ts).
import { createHash } from 'node:crypto'
import { EventEmitter } from 'node:events'
/** What the Redis stores need of a Redis client (node-redis's `createClient()` is one). */
export interface RedisLink {
  readonly isReady: boolean
  sendCommand(args: string[]): Promise<unknown>
  on(event: 'ready', listener: () => void): unknown
  off(event: 'ready', listener: () => void): unknown
}

export interface LuaScript {
  readonly source: string
}

type Args = (string | number)[]

export class ScriptRunner {
  readonly #client: RedisLink
  readonly #sha = new Map<LuaScript, string>()
  /** One listener on the client however many operations wait for it (no listener-leak warning). */
  readonly #ready = new EventEmitter()

  constructor(client: RedisLink) {
    this.#client = client
    this.#ready.setMaxListeners(0)
    client.on('ready', () => this.#ready.emit('ready'))
  }

  /** Called on every reconnect. */
  onReady(listener: () => void): () => void {
    this.#ready.on('ready', listener)
    return () => this.#ready.off('ready', listener)
  }

  get ready(): boolean {
    return this.#client.isReady
  }

  /** One try: rejects when the server is out of reach. */
  async once(s: LuaScript, keys: string[], args: Args): Promise<unknown> {
    let sha = this.#sha.get(s)
    if (sha === undefined) {
      sha = createHash('sha1').update(s.source).digest('hex')
      this.#sha.set(s, sha)
    }
    const tail = [String(keys.length), ...keys, ...args.map(String)]
    try {
      return await this.#client.sendCommand(['EVALSHA', sha, ...tail])
    } catch (err) {
      if (!(err as Error).message?.startsWith('NOSCRIPT')) throw err
      return this.#client.sendCommand(['EVAL', s.source, ...tail])
    }
  }

  /**
   * Runs the script once the server answers: while it is out of reach (or the connection drops
   * on the way) waits for the client to reconnect and tries again. `args` may be a function of
   * whether this is such a retry (a reply lost on the way: the script may have run).
   */
  async call(
    s: LuaScript,
    keys: string[],
    args: Args | ((again: boolean) => Args),
    signal?: AbortSignal,
  ): Promise<unknown> {
    for (let again = false; ; again = true) {
      await this.whenReady(signal)
      try {
        return await this.once(s, keys, typeof args === 'function' ? args(again) : args)
      } catch (err) {
        if (this.#client.isReady) throw err
      }
    }
  }

  /** One command, waiting for the server as call() does. */
  async send(command: string[], signal?: AbortSignal): Promise<unknown> {
    for (;;) {
      await this.whenReady(signal)
      try {
        return await this.#client.sendCommand(command)
      } catch (err) {
        if (this.#client.isReady) throw err
      }
    }
  }

  /** Resolves once the client is connected; rejects with the signal's reason when aborted. */
  whenReady(signal?: AbortSignal): Promise<void> {
    if (this.#client.isReady) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        this.#ready.off('ready', ready)
        signal?.removeEventListener('abort', aborted)
      }
      const ready = () => {
        done()
        resolve()
      }
      const aborted = () => {
        done()
        reject(signal?.reason)
      }
      if (signal?.aborted) {
        reject(signal.reason)
        return
      }
      this.#ready.on('ready', ready)
      signal?.addEventListener('abort', aborted, { once: true })
    })
  }
}

/** Resolves after `ms`, or rejects with the signal's reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
