// A team store that lost its claims (Redis restarted without persistence, or flushed) is found
// by its marker: `P claims:gen` holds the data's generation, written when the data began; each
// machine remembers the one it knows and checks it on every claim, on every reconnect and once a
// second. Missing or new, the data is gone: before anyone claims again, every machine connected
// writes back what its own database knows (its completed claims within retention, and the claims
// it is executing now), only where the server has nothing. Claims wait meanwhile: for a grace in
// which every connected machine notices (a reconnect takes up to a second), and while any
// machine is among the re-seeding ones. A machine that is not running cannot re-seed: what only
// it knew may run again elsewhere.
import { randomBytes } from 'node:crypto'
import { BEGIN_RESEED, SEED } from './scripts'
import type { ScriptRunner } from '../../redis/script-runner'
import type { Clock, StoredStatus } from '../../core/types'

/** A completed claim of this machine's database, written back to a server that lost it. */
export interface ClaimSeed {
  fp: string
  owner: string
  epoch: number
  status: StoredStatus
  result: string
  costMicros: number | null
  completedAt: number
}

/** A claim this machine executes now. */
export interface HeldClaim {
  fp: string
  owner: string
  epoch: number
  /** Its lease's length: written back as a fresh lease (an outage may have outlasted the old). */
  leaseMs: number
}

export interface ClaimReseedOptions {
  run: ScriptRunner
  prefix: string
  clock: Clock
  graceMs: number
  checkEveryMs: number
  onStatus: (message: string) => void
  display: string
  worker: string
  key: (fp: string) => string
  gcMs: () => number
  retained: (seed: ClaimSeed) => boolean
  held: () => HeldClaim[]
}

/** Claims per script call: one round trip each, small enough not to hold the server long. */
const CHUNK = 200
/** A machine that dies while re-seeding holds the others back for this long at most. */
const RESEED_DEADLINE_MS = 60_000

export class ClaimReseed {
  /** Where this machine's completed claims come from (its database); none by default. */
  source: () => Iterable<ClaimSeed> = () => []
  /** The generation of the data this machine knows ('' before the first look). */
  known = ''
  /** The marker, the grace and the re-seeding machines, as the claim script takes them. */
  readonly keys: [string, string, string]
  readonly #o: ClaimReseedOptions
  #running: Promise<void> | null = null
  #timer: NodeJS.Timeout | undefined
  #offReady: (() => void) | undefined

  constructor(options: ClaimReseedOptions) {
    this.#o = options
    const p = `${options.prefix}claims:`
    this.keys = [`${p}gen`, `${p}grace`, `${p}reseeding`]
  }

  /** The first look (a server with no marker is seeded), then one a second and on reconnects. */
  async start(): Promise<void> {
    await this.check()
    const look = () => void this.check().catch(() => undefined)
    this.#timer = setInterval(look, this.#o.checkEveryMs)
    this.#timer.unref()
    this.#offReady = this.#o.run.onReady(look)
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#offReady?.()
  }

  /** Re-seeds when the marker is missing or is not the one this machine knows. */
  async check(): Promise<void> {
    if (!this.#o.run.ready || this.#running) return this.#running ?? undefined
    const gen = (await this.#o.run.send(['GET', this.keys[0]])) as string | null
    if (gen !== null && gen === this.known) return
    // The first look at data another machine began: nothing was lost.
    if (gen !== null && this.known === '') {
      this.known = gen
      return
    }
    await this.run()
  }

  /** One re-seed at a time; callers that find the data gone meanwhile wait for it. */
  run(): Promise<void> {
    this.#running ??= this.#reseed().finally(() => (this.#running = null))
    return this.#running
  }

  async #reseed(): Promise<void> {
    const { run, clock, graceMs, worker, display, onStatus } = this.#o
    const now = clock.now()
    const fresh = `${now.toString(36)}-${randomBytes(6).toString('hex')}`
    const [gen, created] = (await run.call(BEGIN_RESEED, this.keys, [
      fresh,
      worker,
      now + RESEED_DEADLINE_MS,
      now + graceMs,
      graceMs,
      this.known,
    ])) as [string, number]
    try {
      const completed: ClaimSeed[] = []
      for (const seed of this.source()) if (this.#o.retained(seed)) completed.push(seed)
      const held = this.#o.held()
      // Nothing to write back, nothing to say (the budget's own lines say the server is back).
      const lost = this.known !== '' && completed.length + held.length > 0
      const what = `${completed.length} completed tasks from this machine's database${
        held.length > 0 ? ` and its ${held.length} running claims` : ''
      }`
      if (lost) onStatus(`team store ${display} restarted empty: re-seeding ${what}`)
      else if (created === 1 && completed.length > 0) {
        onStatus(`team store ${display} holds no claims yet: seeding ${what}`)
      }
      const written = await this.#seed(completed, held, clock.now())
      if (lost || (created === 1 && completed.length > 0)) {
        onStatus(`team store ${display}: ${written} claims written back; claims resume`)
      }
      this.known = gen
    } finally {
      await run.send(['ZREM', this.keys[2], worker]).catch(() => undefined)
    }
  }

  async #seed(completed: ClaimSeed[], held: HeldClaim[], now: number): Promise<number> {
    const { run, key, gcMs } = this.#o
    let written = 0
    const rows: { fp: string; values: (string | number)[] }[] = [
      ...held.map((h) => ({
        fp: h.fp,
        values: ['running', h.owner, h.epoch, now + h.leaseMs, '', '', '', ''],
      })),
      ...completed.map((c) => ({
        fp: c.fp,
        values: [
          'completed',
          c.owner,
          c.epoch,
          0,
          c.status,
          c.result,
          c.costMicros ?? '',
          c.completedAt,
        ],
      })),
    ]
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK)
      const args = [...chunk.flatMap((r) => r.values), gcMs()]
      written += Number(
        await run.call(
          SEED,
          chunk.map((r) => key(r.fp)),
          args,
        ),
      )
    }
    return written
  }
}
