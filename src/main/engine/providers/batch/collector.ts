// The batch path under the ordinary providers: a `fetch` that takes each live call (…/chat/
// completions, …/v1/messages), gathers the calls of a round into provider batches, journals each
// submission before its request goes out and its remote id before the first poll, polls, and
// answers every call with its line from the results, as the live endpoint would have answered.
// Everything above it (claims, the durable journal, the ledger, results, agent modules) is the
// live path's: a multi-step task's next call simply joins the next round.
import { EventEmitter } from 'node:events'
import type Database from 'better-sqlite3'
import type { Clock } from '../../core/types'
import type { WriteScope } from '../../db/step-writes'
import { sleep } from '../../core/timers'
import { BatchJournal, type JournalLine, type Vendor } from './journal'
import { recoverLost, submissionTag } from './lost'
import { splitForVendor } from './split'
import { VENDORS, vendorOf, type BatchRequest, type RemoteStatus } from './vendors'
import type { Accepted, VendorLink } from './vendors'
import {
  headersOf,
  customIdOf,
  modelOf,
  refusal,
  responseOf,
  toView,
  unanswered,
  type ProviderBatchView,
} from './answers'

export type { ProviderBatchView } from './answers'
export { submissionTag } from './lost'

export interface BatchApiOptions {
  db: Database.Database
  /** The engine's write scope: journal writes are committed before anything leaves the process. */
  writes: WriteScope
  clock: Clock
  /** How often a submitted batch is polled. @default 60_000 */
  pollMs?: number
  /** A round is submitted once no new call came for this long. @default 2_000 */
  settleMs?: number
  /** …and at the latest this long after its first call. @default 30_000 */
  maxRoundMs?: number
  /** The network. @default globalThis.fetch, looked up at call time */
  fetch?: typeof fetch
}

export interface BatchApiEvents {
  /** A submission was sent, polled, or ended. */
  status: [ProviderBatchView]
  warning: [string]
}

interface Waiter {
  resolve(res: Response): void
  reject(err: unknown): void
}

interface Call {
  customId: string
  vendor: Vendor
  endpoint: string
  model: string
  body: string
}

interface RoundGroup {
  vendor: Vendor
  endpoint: string
  model: string
  requests: Map<string, BatchRequest>
}

/**
 * Sends calls as provider batches (OpenAI's Batch API, Anthropic's Message Batches) at half the
 * price: `fetch` is given to the HTTP providers in place of the network.
 */
export class BatchApi extends EventEmitter<BatchApiEvents> {
  readonly journal: BatchJournal
  /** The Pacer batch whose calls it carries, written with each submission (the Queue view's). */
  batchId: string | null = null
  readonly #o: Required<Omit<BatchApiOptions, 'fetch' | 'db'>> & { fetch?: typeof fetch }
  readonly #waiters = new Map<string, Waiter[]>()
  /** The request bodies of the calls waiting here, by custom_id. */
  readonly #bodies = new Map<string, string>()
  readonly #round = new Map<string, RoundGroup>()
  readonly #polling = new Map<number, Promise<void>>()
  /** Submissions this process is sending now (journaled, the vendor's answer not in yet). */
  readonly #submitting = new Set<number>()
  /** The latest headers of the live calls per endpoint: the key the batch endpoints get. */
  readonly #links = new Map<string, Record<string, string>>()
  readonly #stop = new AbortController()
  #settle: NodeJS.Timeout | undefined
  #roundStarted = 0
  /** Set once the Pacer batch is cancelled: no round goes out any more (cancel-batch.ts). */
  #held = false

  constructor(options: BatchApiOptions) {
    super()
    this.journal = new BatchJournal(options.db)
    this.#o = {
      pollMs: 60_000,
      settleMs: 2_000,
      maxRoundMs: 30_000,
      ...options,
    }
    for (const [k, v] of Object.entries({ pollMs: this.#o.pollMs, settleMs: this.#o.settleMs })) {
      if (!(Number.isInteger(v) && v >= 1)) {
        throw new TypeError(`Expected \`${k}\` to be an integer >= 1, got \`${String(v)}\``)
      }
    }
  }

  get #net(): typeof fetch {
    return this.#o.fetch ?? globalThis.fetch
  }

  /** The `fetch` the providers get: batchable calls join a round, anything else goes out. */
  readonly fetch: typeof fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    const vendor = vendorOf(url)
    if (vendor === null || (init?.method ?? 'GET') !== 'POST') return this.#net(input, init)
    const body = typeof init?.body === 'string' ? init.body : String(init?.body ?? '')
    const model = modelOf(body)
    if (model === null) return this.#net(input, init)
    this.#links.set(url, headersOf(init))
    const call: Call = { customId: customIdOf(url, body), vendor, endpoint: url, model, body }
    const signal = init?.signal ?? undefined
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const waiter: Waiter = {
        resolve: (r) => {
          signal?.removeEventListener('abort', onAbort)
          resolve(r)
        },
        reject,
      }
      const onAbort = () => {
        const list = this.#waiters.get(call.customId)
        const i = list?.indexOf(waiter) ?? -1
        if (list && i >= 0) list.splice(i, 1)
        if (list?.length === 0) this.#forget(call.customId)
        reject(signal?.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      let list = this.#waiters.get(call.customId)
      if (!list) this.#waiters.set(call.customId, (list = []))
      list.push(waiter)
      this.#bodies.set(call.customId, body)
      // A second identical request joins the same line only while it waits; each is billed once.
      if (list.length === 1) this.#route(call)
    })
  }

  /** Where a call's answer comes from: a line already at the vendor, or (`fresh`) the next round. */
  #route(call: Call, fresh = false): void {
    const line = fresh ? undefined : this.journal.latest(call.customId)
    // A line an abandoned submission gave back (status 0) has no answer: it goes in a round.
    if (line && !line.delivered && !(line.state !== 'pending' && line.status === 0)) {
      if (line.state !== 'pending') return this.#deliver(call.customId)
      // Being submitted by this process: its submit polls it once the vendor has answered.
      if (!this.#submitting.has(line.submission)) this.#ensurePolling(line.submission)
      return
    }
    const key = `${call.endpoint}\n${call.model}`
    let group = this.#round.get(key)
    if (!group) {
      group = {
        vendor: call.vendor,
        endpoint: call.endpoint,
        model: call.model,
        requests: new Map(),
      }
      this.#round.set(key, group)
    }
    if (this.#round.size === 1 && group.requests.size === 0) this.#roundStarted = Date.now()
    group.requests.set(call.customId, { customId: call.customId, body: call.body })
    clearTimeout(this.#settle)
    const left = this.#o.maxRoundMs - (Date.now() - this.#roundStarted)
    this.#settle = setTimeout(() => this.#flush(), Math.max(1, Math.min(this.#o.settleMs, left)))
  }

  /** Submits the round: one provider batch per endpoint and model, split to the vendor's limits. */
  #flush(): void {
    if (this.#held) return
    const groups = [...this.#round.values()]
    this.#round.clear()
    for (const g of groups) {
      const requests = [...g.requests.values()].filter((r) => this.#waiters.has(r.customId))
      if (requests.length === 0) continue
      let chunks: BatchRequest[][]
      try {
        chunks = splitForVendor(g.vendor, requests)
      } catch (err) {
        this.emit('warning', (err as Error).message)
        chunks = requests.map((r) => [r])
      }
      for (const chunk of chunks) {
        void this.#submit(g, chunk).catch((err: unknown) => {
          this.emit('warning', `provider batch: ${(err as Error).message}`)
        })
      }
    }
  }

  async #submit(g: RoundGroup, chunk: BatchRequest[]): Promise<void> {
    const { writes, clock } = this.#o
    const now = clock.now()
    const ids = chunk.map((r) => r.customId)
    const id = writes.run(() => this.journal.begin(g, ids, now, this.batchId))
    this.#submitting.add(id)
    try {
      await this.#send(g, id, chunk, now)
    } finally {
      this.#submitting.delete(id)
    }
    this.#ensurePolling(id)
  }

  async #send(g: RoundGroup, id: number, chunk: BatchRequest[], now: number): Promise<void> {
    const { writes, clock } = this.#o
    const api = VENDORS[g.vendor]
    await writes.durable()
    const link = this.link(g.endpoint)
    let sent: Accepted
    try {
      sent = await api.submit(link, chunk, submissionTag({ id, createdAt: now }))
    } catch (err) {
      const refused = refusal(g, err)
      writes.run(() => this.journal.end(id, 'refused', [], refused, clock.now(), refused.message))
      await writes.durable()
      this.#announce(id)
      return
    }
    // The id before the first poll: from here on, no rerun submits these lines again.
    writes.run(() => this.journal.submitted(id, sent.remoteId, sent.inputFile, sent.status))
    await writes.durable()
    this.#announce(id)
  }

  /** How this process reaches an endpoint: the key its latest live call there carried. */
  link(endpoint: string): VendorLink {
    return {
      endpoint,
      headers: this.#links.get(endpoint) ?? {},
      fetch: this.#net,
      signal: this.#stop.signal,
    }
  }

  #ensurePolling(id: number): void {
    if (this.#polling.has(id)) return
    const run = this.#poll(id)
      .catch((err: unknown) => {
        if (!this.#stop.signal.aborted)
          this.emit('warning', `provider batch ${id}: ${(err as Error).message}`)
      })
      .finally(() => this.#polling.delete(id))
    this.#polling.set(id, run)
  }

  async #poll(id: number): Promise<void> {
    const { writes, clock, pollMs } = this.#o
    let s = this.journal.submission(id)
    if (s && s.remoteId === null && !s.ended) {
      const o = {
        ...this.#o,
        signal: this.#stop.signal,
        warn: (m: string) => this.emit('warning', m),
      }
      const found = await recoverLost(this.journal, s, this.link(s.endpoint), o)
      this.#announce(id)
      if (!found) return this.#resubmitWaiting(id)
      s = this.journal.submission(id)
    }
    let failures = 0
    while (s && !s.ended && s.remoteId !== null) {
      await sleep(pollMs, this.#stop.signal)
      const api = VENDORS[s.vendor]
      const link = this.link(s.endpoint)
      let status: RemoteStatus
      try {
        status = await api.status(link, s.remoteId)
        failures = 0
      } catch (err) {
        if (this.#stop.signal.aborted) throw err
        // A poll that failed is tried again at the next interval: the batch is at the vendor.
        if (++failures === 1 || failures % 10 === 0) {
          this.emit('warning', `polling ${s.remoteId}: ${(err as Error).message}`)
        }
        continue
      }
      writes.run(() => this.journal.polled(id, status.status, status.counts, clock.now()))
      if (status.ended) {
        const answers = await api.results(link, status)
        const rest = unanswered(s, status)
        writes.run(() =>
          this.journal.end(id, status.status, answers, rest, clock.now(), status.error),
        )
        await writes.durable()
      }
      this.#announce(id)
      s = this.journal.submission(id)
    }
    this.#deliverSubmission(id)
  }

  #deliverSubmission(id: number): void {
    for (const line of this.journal.lines(id)) {
      if (this.#waiters.has(line.customId)) this.#deliver(line.customId)
    }
  }

  /** Hands a line's answer to the first call waiting for it; any other identical call goes on. */
  #deliver(customId: string): void {
    const line = this.journal.latest(customId)
    const list = this.#waiters.get(customId)
    if (!line || !list || list.length === 0 || line.state === 'pending') return
    const waiter = list.shift()!
    if (list.length === 0) this.#forget(customId)
    const remoteId = this.journal.submission(line.submission)?.remoteId ?? null
    this.#o.writes.run(() => this.journal.delivered(customId, line.submission))
    waiter.resolve(responseOf(line, remoteId))
    // Another call of the very same request: billed once more, in a round of its own.
    if (list.length > 0) this.#requeue(customId, line)
  }

  #requeue(customId: string, line: JournalLine, fresh = false): void {
    const s = this.journal.submission(line.submission)
    const body = this.#bodyOf(customId)
    if (!s || body === null) return
    this.#route({ customId, vendor: s.vendor, endpoint: s.endpoint, model: s.model, body }, fresh)
  }

  /** Lines of an abandoned submission whose calls wait: into the next round, not the journal. */
  #resubmitWaiting(id: number): void {
    for (const line of this.journal.lines(id)) {
      if (this.#waiters.has(line.customId)) this.#requeue(line.customId, line, true)
    }
  }

  #forget(customId: string): void {
    this.#waiters.delete(customId)
    this.#bodies.delete(customId)
  }

  #bodyOf(customId: string): string | null {
    return this.#bodies.get(customId) ?? null
  }

  #announce(id: number): void {
    const view = this.view(id)
    if (view) this.emit('status', view)
  }

  /** One submission as shown. */
  view(id: number): ProviderBatchView | undefined {
    const s = this.journal.submission(id)
    return s && toView(s, this.#o.clock.now())
  }

  /** The newest submissions first. */
  list(limit?: number): ProviderBatchView[] {
    const now = this.#o.clock.now()
    return this.journal.list(limit).map((s) => toView(s, now))
  }

  /**
   * Asks the vendor to cancel a submission (by Pacer's id or the vendor's): what finished is kept
   * and delivered when the batch ends. `headers`: the key, as the live calls carry it.
   */
  async cancel(idOrRemote: string, headers: Record<string, string>): Promise<ProviderBatchView> {
    const s = /^\d+$/.test(idOrRemote)
      ? this.journal.submission(Number(idOrRemote))
      : this.journal.byRemoteId(idOrRemote)
    if (!s) throw new RangeError(`no provider batch ${idOrRemote} in this database`)
    if (s.ended || s.remoteId === null) {
      throw new RangeError(
        `provider batch ${s.remoteId ?? s.id} has ended (${s.status}): nothing to cancel`,
      )
    }
    const link = { ...this.link(s.endpoint), headers }
    const status = await VENDORS[s.vendor].cancel(link, s.remoteId)
    this.#o.writes.run(() =>
      this.journal.polled(s.id, status.status, status.counts, this.#o.clock.now()),
    )
    await this.#o.writes.durable()
    return this.view(s.id)!
  }

  /** Submits no more rounds: calls that join one wait until their own signals abort them. */
  hold(): void {
    this.#held = true
    clearTimeout(this.#settle)
  }

  /** Stops polling and rounds; calls still waiting are aborted by their own signals. */
  close(): void {
    clearTimeout(this.#settle)
    this.#stop.abort(new Error('closed'))
  }
}
