import { performance } from 'node:perf_hooks'
import type {
  Admission,
  PacingRecord,
  PacingStore,
  PacingView,
  PollPolicy,
  RecordChange,
  ReleaseRequest,
  Released,
  SessionInit,
  WorkerLease,
} from './store'
import { Doorbell, applyChange, checkStoreMs, newRecord } from './store'
import { ScriptRunner } from '../redis/script-runner'
import type { LuaScript } from '../redis/lua'
import type { BudgetCost, SharedBudget } from './shared-budget'
import { parseBudget } from './shared-budget'
import { settleText, ticketOf } from './redis-budget'
import { RecordCache, stored } from './redis-records'
import type { RedisLink } from '../redis/script-runner'
import { ADMIT, CHECK, HEARTBEAT, JOIN, RELEASE, VIEWS, WRITE } from './redis-scripts'

export type { RedisLink } from '../redis/script-runner'

export interface RedisPacingStoreOptions {
  /** A connected client; the store never closes it. */
  client: RedisLink
  /** Prepended to every key, so several teams (or tests) can share one Redis. @default 'pacer:' */
  prefix?: string
  /** @default 30_000 */
  leaseMs?: number
  /** First poll of a blocked admission (other machines' releases), doubled up to pollMaxMs. @default 2 */
  pollMinMs?: number
  /** @default 50 */
  pollMaxMs?: number
}

type Joined = { record: PacingRecord; created: boolean }
type Reply = (string | number)[]

/** A compare-and-set that lost this many times in a row gives up with an error. */
const MAX_ATTEMPTS = 20

/**
 * The pacing store in Redis: every machine on the server shares each partition's budget. Each
 * operation is one Lua script (redis-scripts.ts); a decision computed here from the record (a
 * release's, an operator's) is written by compare-and-set on the record's version and made again
 * on the new record when another worker moved it in between. While the server is unreachable
 * every operation waits for the client to reconnect, so nothing is admitted without a slot.
 */
export class RedisPacingStore implements PacingStore {
  readonly leaseMs: number
  readonly poll: PollPolicy
  /** Set by the connection (redis-connect.ts) while the server is out of reach. */
  outage: string | null = null
  readonly #client: RedisLink
  readonly #prefix: string
  readonly #index: string
  readonly #bell = new Doorbell()
  readonly #cache = new RecordCache()
  readonly #scripts: ScriptRunner
  /** What each worker joined with: a server restarted without its data is joined again. */
  readonly #inits = new Map<string, SessionInit>()
  #views: PacingView[] = []
  readonly #inflight = new Set<Promise<unknown>>()

  constructor({
    client,
    prefix = 'pacer:',
    leaseMs = 30_000,
    pollMinMs = 2,
    pollMaxMs = 50,
  }: RedisPacingStoreOptions) {
    this.leaseMs = checkStoreMs('leaseMs', leaseMs, 1)
    checkStoreMs('pollMinMs', pollMinMs, 1)
    this.poll = { minMs: pollMinMs, maxMs: checkStoreMs('pollMaxMs', pollMaxMs, pollMinMs) }
    this.#client = client
    this.#scripts = new ScriptRunner(client)
    this.#prefix = `${prefix}pacing:`
    this.#index = `${this.#prefix}index`
  }

  join(partition: string, worker: string, init: SessionInit, now: number): Promise<Joined> {
    return this.#track(this.#join(partition, worker, init, now))
  }

  admit(
    partition: string,
    worker: string,
    now: number,
    waiting: number,
    cost?: BudgetCost,
  ): Promise<Admission> {
    return this.#track(this.#admit(partition, worker, now, waiting, cost))
  }

  release(partition: string, worker: string, request: ReleaseRequest): Promise<Released> {
    return this.#track(this.#release(partition, worker, request))
  }

  update(
    partition: string,
    now: number,
    decide: (record: PacingRecord) => RecordChange | null,
  ): Promise<{ record: PacingRecord; changed: boolean } | undefined> {
    return this.#track(this.#update(partition, now, decide))
  }

  heartbeat(worker: string, leases: readonly WorkerLease[], now: number): Promise<void> {
    return this.#track(this.#heartbeat(worker, leases, now))
  }

  /** Resolves once every operation begun so far has ended (before the client closes). */
  async settled(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
  }

  async #join(partition: string, worker: string, init: SessionInit, now: number): Promise<Joined> {
    this.#inits.set(`${partition}\u0000${worker}`, init)
    const at = await this.#ready(now)
    const fresh = newRecord(partition, init, 0)
    const r = (await this.#run(
      JOIN,
      [...this.#keys(partition), this.#index],
      [worker, at, this.leaseMs, partition, stored(fresh), fresh.concurrency],
    )) as Reply
    const record = this.#cache.parse(partition, Number(r[1]), String(r[2]))
    return { record, created: r[0] === 1 }
  }

  async #admit(
    partition: string,
    worker: string,
    now: number,
    waiting: number,
    cost: BudgetCost | undefined,
  ): Promise<Admission> {
    const costText = cost ? JSON.stringify(cost) : ''
    for (let attempt = 0; ; attempt++) {
      const at = await this.#ready(now)
      const known = this.#cache.known(partition)
      const r = (await this.#run(ADMIT, this.#keys(partition), [
        worker,
        at,
        this.leaseMs,
        waiting,
        known,
        costText,
      ])) as Reply
      if (r[0] === -1) {
        await this.#rejoin(partition, worker, at, attempt)
        continue
      }
      const record = this.#cache.parse(partition, Number(r[1]), String(r[4]))
      const admission: Admission = {
        admitted: r[0] === 1,
        record,
        inflight: Number(r[2]),
        othersWaiting: Number(r[3]),
      }
      if (Number(r[5] ?? 0) > 0) admission.budgetWaitMs = Number(r[5])
      const ticket = ticketOf(r, 6)
      if (ticket) admission.ticket = ticket
      return admission
    }
  }

  async #release(partition: string, worker: string, request: ReleaseRequest): Promise<Released> {
    const { waiting, outcome, decide, handoff } = request
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = await this.#ready(request.now)
      let expect = ''
      let change: PacingRecord | null = null
      // The record moved under every decision so far (the other workers' releases decided
      // meanwhile): the slot goes back without this call's decision rather than not at all.
      if (decide && attempt < MAX_ATTEMPTS - 1) {
        const seen = await this.#checked(partition, worker, now)
        if (!seen) {
          await this.#rejoin(partition, worker, now, attempt)
          continue
        }
        const decision = decide(seen.record, seen.inflight)
        expect = String(seen.record.version)
        change = decision ? applyChange(seen.record, decision) : null
      }
      const r = (await this.#run(RELEASE, this.#keys(partition), [
        worker,
        now,
        this.leaseMs,
        waiting,
        outcome === null ? '' : outcome[0]!,
        expect,
        change ? stored(change) : '',
        change?.concurrency ?? 0,
        change?.pausedUntil ?? 0,
        handoff === true ? '1' : '0',
        this.#cache.known(partition),
        request.budget ? settleText(request.budget) : '',
        request.handoffCost ? JSON.stringify(request.handoffCost) : '',
      ])) as Reply
      if (r[0] === -1) {
        // The server lost the partition (restarted empty): the slot went with it.
        await this.#rejoin(partition, worker, now, attempt)
        const record = this.#cache.get(partition) as PacingRecord
        return { record, inflight: 0, changed: false, handedOff: false }
      }
      if (r[0] === 2) continue
      const record = change
        ? this.#cache.remember(change)
        : this.#cache.parse(partition, Number(r[1]), String(r[4]))
      this.#bell.ring(partition, worker)
      const ticket = ticketOf(r, 6)
      return {
        record,
        inflight: Number(r[2]),
        changed: change !== null,
        handedOff: r[3] === 1,
        ...(ticket && { ticket }),
      }
    }
    throw new Error(`pacing partition ${partition}: the record kept moving (${MAX_ATTEMPTS} tries)`)
  }

  async #update(
    partition: string,
    now: number,
    decide: (record: PacingRecord) => RecordChange | null,
  ): Promise<{ record: PacingRecord; changed: boolean } | undefined> {
    await this.#ready(now)
    let current = await this.record(partition)
    for (let attempt = 0; current && attempt < MAX_ATTEMPTS; attempt++) {
      const decision = decide(current)
      if (!decision) return { record: current, changed: false }
      const next = applyChange(current, decision)
      const r = (await this.#run(
        WRITE,
        [this.#keys(partition)[0]],
        [current.version, stored(next), next.concurrency, next.pausedUntil],
      )) as Reply
      if (r[0] === -1) return undefined
      if (r[0] === 1) {
        this.#bell.ring(partition, '')
        return { record: this.#cache.remember(next), changed: true }
      }
      current = this.#cache.parse(partition, Number(r[1]), String(r[2]))
    }
    if (!current) return undefined
    throw new Error(`pacing partition ${partition}: the record kept moving (${MAX_ATTEMPTS} tries)`)
  }

  async record(partition: string): Promise<PacingRecord | undefined> {
    const [version, json] = (await this.#client.sendCommand([
      'HMGET',
      this.#keys(partition)[0],
      'version',
      'json',
    ])) as (string | null)[]
    if (version === null || version === undefined) return undefined
    return this.#cache.parse(partition, Number(version), json ?? '')
  }

  async budget(partition: string): Promise<SharedBudget> {
    const text = (await this.#client.sendCommand(['HGET', this.#keys(partition)[0], 'budget'])) as
      string | null
    return parseBudget(text)
  }

  async #heartbeat(worker: string, leases: readonly WorkerLease[], now: number): Promise<void> {
    // Offline: the next beat after the reconnect renews; piling beats up would only repeat it.
    if (leases.length === 0 || !this.#client.isReady) return
    const keys = leases.flatMap((l) => this.#keys(l.partition))
    const args = [worker, now, this.leaseMs, ...leases.flatMap((l) => [l.slots, l.waiting])]
    const missing = (await this.#once(HEARTBEAT, keys, args)) as number[]
    if (missing.length === 0) return
    // The server came back without the partitions: join again and say what this worker holds.
    const lost = missing.map((i) => leases[i] as WorkerLease)
    for (const lease of lost) await this.#rejoin(lease.partition, worker, now, 0)
    await this.#run(
      HEARTBEAT,
      lost.flatMap((l) => this.#keys(l.partition)),
      [worker, now, this.leaseMs, ...lost.flatMap((l) => [l.slots, l.waiting])],
    )
  }

  async partitions(now: number, recentMs: number): Promise<PacingView[]> {
    // Offline: the console keeps showing the last answer (and the store's status says why).
    if (!this.#client.isReady) return this.#views
    const r = (await this.#once(VIEWS, [this.#index], [now, now - recentMs, this.#prefix])) as Reply
    const views: PacingView[] = []
    for (let i = 0; i + 9 < r.length; i += 10) {
      views.push({
        record: this.#cache.parse(String(r[i]), Number(r[i + 1]), String(r[i + 2])),
        inflight: Number(r[i + 3]),
        waiting: Number(r[i + 4]),
        throttles: Number(r[i + 5]),
        successes: Number(r[i + 6]),
        errors: Number(r[i + 7]),
        workers: Number(r[i + 8]),
        activeUntil: Number(r[i + 9]),
      })
    }
    this.#views = views
    return views
  }

  subscribe(worker: string, listener: (partition: string) => void): () => void {
    return this.#bell.subscribe(worker, listener)
  }

  #track<T>(operation: Promise<T>): Promise<T> {
    this.#inflight.add(operation)
    void operation.then(
      () => this.#inflight.delete(operation),
      () => this.#inflight.delete(operation),
    )
    return operation
  }

  #keys(partition: string): [string, string] {
    return [`${this.#prefix}${partition}:rec`, `${this.#prefix}${partition}:w`]
  }

  async #checked(
    partition: string,
    worker: string,
    now: number,
  ): Promise<{ record: PacingRecord; inflight: number } | undefined> {
    const r = (await this.#run(CHECK, this.#keys(partition), [
      worker,
      now,
      this.#cache.known(partition),
    ])) as Reply
    if (r[0] === 0) return undefined
    return {
      record: this.#cache.parse(partition, Number(r[1]), String(r[3])),
      inflight: Number(r[2]),
    }
  }

  /** Joins again with what the worker joined with, when the server no longer has the partition. */
  async #rejoin(partition: string, worker: string, now: number, attempt: number): Promise<void> {
    const init = this.#inits.get(`${partition}\u0000${worker}`)
    if (!init || attempt >= 2) {
      throw new Error(`pacing partition ${partition} has no record: join it first`)
    }
    await this.#join(partition, worker, init, now)
  }

  /**
   * Waits until the client is connected; `now` moved on by the wait, so a lease taken after an
   * outage is as long as any other.
   */
  async #ready(now: number): Promise<number> {
    if (this.#client.isReady) return now
    const started = performance.now()
    await new Promise<void>((resolve) => {
      const ready = () => {
        this.#client.off('ready', ready)
        resolve()
      }
      this.#client.on('ready', ready)
    })
    return now + Math.round(performance.now() - started)
  }

  /**
   * EVALSHA (the source once when the server does not know it, yet or again). A connection lost
   * on the way (the command written, the socket closed before its answer) is waited out and the
   * script sent again, like an outage known before: a slot taken twice that way is given back by
   * the next heartbeat, which says how many the worker holds.
   */
  #run(s: LuaScript, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.#scripts.call(s, keys, args)
  }

  /** One try, for what may as well wait for the next round (heartbeats, the console's views). */
  #once(s: LuaScript, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.#scripts.once(s, keys, args)
  }
}
