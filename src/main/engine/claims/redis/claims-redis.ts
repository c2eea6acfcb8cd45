import { EventEmitter } from 'node:events'
import { randomBytes } from 'node:crypto'
import { checkMs } from '../claims'
import { waitForClaim, type WaitStep } from '../wait'
import { ClaimReseed, type ClaimSeed } from './reseed'
import { ClaimRetention } from '../retention'
import {
  CLAIM,
  COMPLETE,
  FORGET_FAILURE,
  GET_RESULT,
  RELEASE,
  RENEW,
  TAKE_OVER,
  WAIT_STEP,
  parseAttempt,
  toStoredResult,
  type Reply,
} from './scripts'
import { ScriptRunner, sleep, type RedisLink } from '../../redis/script-runner'
import {
  systemClock,
  type ClaimAttempt,
  type ClaimOptions,
  type Clock,
  type StoredResult,
  type StoredStatus,
  type TeamClaimStore,
  type WaitOutcome,
} from '../../core/types'

export type { ClaimSeed } from './reseed'

/** A second connection for pub/sub (node-redis's `client.duplicate()`, connected). */
export interface RedisSubscriber {
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>
}

export interface RedisClaimStoreOptions {
  /** A connected client; the store never closes it. */
  client: RedisLink
  /** Wakes waiters at once on another machine's completion; without one they poll. */
  subscriber?: RedisSubscriber | null
  /** Prepended to every key, so several teams (or tests) can share one Redis. @default 'pacer:' */
  prefix?: string
  /** @default systemClock */
  clock?: Clock
  /** How long a completed result is reused; 0 = forever. @default 86_400_000 */
  resultTtlMs?: number
  /** @default false */
  acceptTruncated?: boolean
  /** First poll interval of wait(); doubles up to pollMaxMs. @default 25 */
  pollMinMs?: number
  /** @default 1000 */
  pollMaxMs?: number
  /**
   * After a server that lost its claims is found, nobody claims for this long, so that every
   * machine connected notices and re-seeds first. @default 3000
   */
  reseedGraceMs?: number
  /** How often the data's marker is checked besides every claim and reconnect. @default 1000 */
  checkEveryMs?: number
  /** What the operator is told (a re-seed), one line each. */
  onStatus?: (message: string) => void
  /** The server as the operator knows it (a masked URL), for those lines. @default 'redis' */
  display?: string
}

/**
 * The claim store in Redis: the same semantics as SqliteClaimStore (claims.ts), shared by every
 * machine on the server. Each operation is one Lua script (claims-redis-scripts.ts); waiters are
 * woken by pub/sub and poll as a fallback. While the server is out of reach every operation but
 * renewal waits for it, so no claim is made without it. A server that lost its data (restarted
 * without persistence) is found by its marker and re-seeded before anyone claims
 * (claims-reseed.ts).
 */
export class RedisClaimStore implements TeamClaimStore {
  readonly #clock: Clock
  readonly #pollMinMs: number
  readonly #pollMaxMs: number
  readonly #prefix: string
  readonly #channel: string
  readonly #run: ScriptRunner
  readonly #subscriber: RedisSubscriber | null
  readonly #bell = new EventEmitter()
  /** Claims this process holds, by fingerprint: fenced by owner too, re-seeded if lost. */
  readonly #held = new Map<string, { owner: string; epoch: number; leaseMs: number }>()
  readonly #reseed: ClaimReseed
  readonly #retention: ClaimRetention
  /** Completions and releases on their way, for a connection that closes. */
  readonly #inflight = new Set<Promise<unknown>>()

  constructor({
    client,
    subscriber = null,
    prefix = 'pacer:',
    clock = systemClock,
    resultTtlMs = 86_400_000,
    acceptTruncated = false,
    pollMinMs = 25,
    pollMaxMs = 1000,
    reseedGraceMs = 3000,
    checkEveryMs = 1000,
    onStatus = () => {},
    display = 'redis',
  }: RedisClaimStoreOptions) {
    this.#retention = new ClaimRetention(resultTtlMs, acceptTruncated)
    checkMs('pollMinMs', pollMinMs, 1)
    checkMs('pollMaxMs', pollMaxMs, pollMinMs)
    checkMs('reseedGraceMs', reseedGraceMs, 0)
    checkMs('checkEveryMs', checkEveryMs, 1)
    this.#clock = clock
    this.#pollMinMs = pollMinMs
    this.#pollMaxMs = pollMaxMs
    this.#prefix = prefix
    this.#channel = `${prefix}claims:done`
    this.#run = new ScriptRunner(client)
    this.#subscriber = subscriber
    this.#bell.setMaxListeners(0)
    this.#reseed = new ClaimReseed({
      run: this.#run,
      prefix,
      clock,
      graceMs: reseedGraceMs,
      checkEveryMs,
      onStatus,
      display,
      key: (fp) => this.#key(fp),
      gcMs: () => this.#retention.gcMs(),
      retained: (seed) => this.#retention.retained(seed.status, seed.completedAt, clock.now()),
      held: () => [...this.#held].map(([fp, h]) => ({ fp, ...h })),
      worker: `${randomBytes(6).toString('hex')}`,
    })
  }

  /** Subscribes to completions, checks (and if need be re-seeds) the data, starts watching it. */
  async start(): Promise<void> {
    await this.#subscriber?.subscribe(this.#channel, (fp) => this.#bell.emit(fp))
    await this.#reseed.start()
  }

  /** Stops watching the data's marker (the connection is closing). */
  stop(): void {
    this.#reseed.stop()
  }

  /** Where a re-seed finds this machine's completed claims (its local database). */
  seedFrom(source: () => Iterable<ClaimSeed>): void {
    this.#reseed.source = source
  }

  /**
   * Reads the retention and acceptTruncated from `source` from now on: the local store, which
   * Settings change while running.
   */
  follow(source: { resultTtlMs: number; acceptTruncated: boolean }): void {
    this.#retention.follow(source)
  }

  get resultTtlMs(): number {
    return this.#retention.resultTtlMs
  }

  set resultTtlMs(ms: number) {
    this.#retention.resultTtlMs = ms
  }

  get acceptTruncated(): boolean {
    return this.#retention.acceptTruncated
  }

  set acceptTruncated(on: boolean) {
    this.#retention.acceptTruncated = on
  }

  /** Resolves once every completion and release begun so far has ended. */
  async settled(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
  }

  #track<T>(operation: Promise<T>): Promise<T> {
    this.#inflight.add(operation)
    const done = () => this.#inflight.delete(operation)
    operation.then(done, done)
    return operation
  }

  /** Atomic claim: owned, the completed result, busy, or a takeover of an expired lease. */
  async claim(
    fp: string,
    owner: string,
    leaseMs: number,
    opts: ClaimOptions = {},
  ): Promise<ClaimAttempt> {
    checkMs('leaseMs', leaseMs, 1)
    for (;;) {
      const now = this.#clock.now()
      const r = (await this.#run.call(
        CLAIM,
        [this.#key(fp), ...this.#reseed.keys],
        [owner, now, now + leaseMs, this.resultTtlMs, this.#retention.accept, this.#reseed.known],
        opts.signal,
      )) as Reply
      const kind = r[0]
      if (kind === 'lost') {
        await this.#reseed.run()
        continue
      }
      if (kind === 'hold') {
        await sleep(Math.min(Number(r[1]), 100), opts.signal)
        continue
      }
      return this.#attempt(fp, owner, leaseMs, r)
    }
  }

  /** Extends the lease while this epoch (and owner) still holds the claim. */
  async renew(fp: string, epoch: number, leaseMs: number): Promise<boolean> {
    const out = await this.renewMany([{ fp, epoch }], leaseMs)
    if (out === null) throw new Error('team store out of reach: the lease was not renewed')
    return out[0] === true
  }

  async renewMany(
    claims: readonly { fp: string; epoch: number }[],
    leaseMs: number,
  ): Promise<boolean[] | null> {
    checkMs('leaseMs', leaseMs, 1)
    if (claims.length === 0) return []
    if (!this.#run.ready) return null
    const until = this.#clock.now() + leaseMs
    const args: (string | number)[] = [until]
    for (const { fp, epoch } of claims) {
      const held = this.#heldAt(fp, epoch)
      args.push(epoch, held?.owner ?? '', held ? '1' : '0')
    }
    let r: number[]
    try {
      r = (await this.#run.once(
        RENEW,
        claims.map((c) => this.#key(c.fp)),
        args,
      )) as number[]
    } catch (err) {
      if (!this.#run.ready) return null
      throw err
    }
    return claims.map(({ fp, epoch }, i) => {
      const held = this.#heldAt(fp, epoch)
      if (r[i] !== 1) {
        if (held) this.#held.delete(fp)
        return false
      }
      if (held) held.leaseMs = leaseMs
      return true
    })
  }

  /** Compare-and-set takeover, only after the lease expired. */
  async takeOver(fp: string, owner: string, expectedEpoch: number, leaseMs: number) {
    checkMs('leaseMs', leaseMs, 1)
    const now = this.#clock.now()
    const r = await this.#run.call(
      TAKE_OVER,
      [this.#key(fp)],
      [owner, expectedEpoch, now, now + leaseMs],
    )
    if (r !== 1) return false
    this.#held.set(fp, { owner, epoch: expectedEpoch + 1, leaseMs })
    return true
  }

  /** Fenced completion: false when a newer epoch owns the claim. Retried while out of reach. */
  async complete(
    fp: string,
    epoch: number,
    result: string,
    status: StoredStatus,
    costMicros: number | null = null,
    opts: ClaimOptions = {},
  ): Promise<boolean> {
    const owner = this.#heldAt(fp, epoch)?.owner ?? ''
    const args = (again: boolean) => [
      epoch,
      owner,
      result,
      status,
      costMicros === null ? '' : costMicros,
      this.#clock.now(),
      this.#retention.gcMs(),
      fp,
      again ? '1' : '0',
      this.#reseed.known,
    ]
    const keys = [this.#key(fp), this.#channel, this.#reseed.keys[0]]
    for (;;) {
      const r = await this.#track(this.#run.call(COMPLETE, keys, args, opts.signal))
      if (r !== -1) return this.#ended(fp, epoch, r === 1)
      await this.#reseed.run()
    }
  }

  /** Gives up a running claim so another worker may claim it. */
  async release(fp: string, epoch: number): Promise<boolean> {
    const owner = this.#heldAt(fp, epoch)?.owner ?? ''
    const args = [epoch, owner, this.#clock.now(), this.#retention.gcMs(), fp]
    const r = await this.#track(this.#run.call(RELEASE, [this.#key(fp), this.#channel], args))
    return this.#ended(fp, epoch, r === 1)
  }

  /** Forgets a cached failure so the next claim executes again (its epoch keeps counting up). */
  async forgetFailure(fp: string): Promise<boolean> {
    const r = await this.#run.call(FORGET_FAILURE, [this.#key(fp), this.#channel], [fp])
    if (r === 1) this.#bell.emit(fp)
    return r === 1
  }

  /** The stored result if completed and not past retention. */
  async getResult(fp: string): Promise<StoredResult | undefined> {
    const args = [this.#clock.now(), this.resultTtlMs, this.#retention.accept]
    const r = (await this.#run.call(GET_RESULT, [this.#key(fp)], args)) as Reply
    return r[0] === 'completed' ? toStoredResult(r) : undefined
  }

  /**
   * Waits for the claim to complete, be released, or expire (then takes it over by CAS). Woken by
   * the server's message on a completion or release; polls with backoff too (a message missed
   * while reconnecting, a lease running out). Rejects with the signal's reason when aborted.
   */
  wait(
    fp: string,
    owner: string,
    opts: { timeoutMs: number; leaseMs: number; signal?: AbortSignal },
  ): Promise<WaitOutcome> {
    checkMs('leaseMs', opts.leaseMs, 1)
    return waitForClaim({
      fp,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      clock: this.#clock,
      doorbell: this.#bell,
      pollMinMs: this.#pollMinMs,
      pollMaxMs: this.#pollMaxMs,
      step: () => this.#waitStep(fp, owner, opts.leaseMs),
    })
  }

  async #waitStep(fp: string, owner: string, leaseMs: number): Promise<WaitStep> {
    const now = this.#clock.now()
    let r: Reply
    try {
      r = (await this.#run.once(
        WAIT_STEP,
        [this.#key(fp)],
        [owner, now, now + leaseMs, this.resultTtlMs, this.#retention.accept],
      )) as Reply
    } catch (err) {
      // Out of reach: look again later (the poll), as for a lease still running.
      if (!this.#run.ready) return { kind: 'pending', leaseUntil: now + this.#pollMaxMs }
      throw err
    }
    if (r[0] === 'released') return { kind: 'released' }
    if (r[0] === 'pending') return { kind: 'pending', leaseUntil: Number(r[1]) }
    const attempt = this.#attempt(fp, owner, leaseMs, r)
    if (attempt.kind === 'busy') throw new Error(`wait on ${fp}: unexpected reply`)
    return attempt as WaitOutcome
  }

  #attempt(fp: string, owner: string, leaseMs: number, r: Reply): ClaimAttempt {
    const attempt = parseAttempt(fp, r)
    if (attempt.kind === 'owned') this.#held.set(fp, { owner, epoch: attempt.epoch, leaseMs })
    return attempt
  }

  #ended(fp: string, epoch: number, done: boolean): boolean {
    if (this.#heldAt(fp, epoch)) this.#held.delete(fp)
    if (done) this.#bell.emit(fp)
    return done
  }

  #heldAt(fp: string, epoch: number) {
    const held = this.#held.get(fp)
    return held?.epoch === epoch ? held : undefined
  }

  #key(fp: string): string {
    return `${this.#prefix}claim:${fp}`
  }
}
