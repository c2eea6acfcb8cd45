// Lua scripts on a Redis connection, and the wait for a connection that is out of reach: what the
// claim store's and the pacing store's operations share (claims-redis.ts, store-redis.ts). The
// scripts themselves run as node-redis script methods (createClient's `scripts`, team/scripts.ts):
// node-redis sends EVALSHA and, when the server does not know the script (yet, or again after a
// restart: NOSCRIPT), EVAL with its source. That fallback lives in the client's script methods
// only, not in `sendCommand`, so the client must be created with the team's scripts.
import { EventEmitter } from 'node:events'
import type { LuaScript } from './lua'

/**
 * What the Redis stores need of a Redis client: node-redis's `createClient({ scripts })` with the
 * team's scripts (team/scripts.ts), each one a method of the client.
 */
export interface RedisLink {
  readonly isReady: boolean
  sendCommand(args: string[]): Promise<unknown>
  on(event: 'ready', listener: () => void): unknown
  off(event: 'ready', listener: () => void): unknown
}

type Args = (string | number)[]

export class ScriptRunner {
  readonly #client: RedisLink
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
  once(s: LuaScript, keys: string[], args: Args): Promise<unknown> {
    return runScript(this.#client, s, keys, args)
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

type ScriptMethod = (keys: string[], args: string[]) => Promise<unknown>

/** Runs `s` by its client method (EVALSHA, then EVAL on NOSCRIPT); no wait for the server. */
export async function runScript(
  client: RedisLink,
  s: LuaScript,
  keys: string[],
  args: Args,
): Promise<unknown> {
  const method = (client as unknown as Record<string, ScriptMethod | undefined>)[s.method]
  if (typeof method !== 'function') {
    throw new TypeError(
      `the Redis client has no script method ${s.method}: create it with the team's scripts (createClient({ scripts: clientScripts(defineScript) }), team/scripts.ts)`,
    )
  }
  return method.call(client, keys, args.map(String))
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
