// The spend caps of a team (issue 21): kept in the team store, so they hold across every machine
// on it. A call's worst case is reserved under every team cap that covers it by one Lua script
// (redis/lua/caps/, keys in common.lua), marked sent before its request goes out, and settled to
// its ledger row's cost once the row is committed; a process that dies leaves its reservations to
// its lease: the unsent come back, the sent stay counted as in doubt (they may have been billed)
// until their answer is settled. Per cap and period, at every script: spent + in doubt + reserved
// ≤ cap. The caps' periods are computed here (time zones), so each script is given the version
// of the caps it was computed from and answers 'stale' (with the caps) when they changed.
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { SpendCapView } from '../../../shared/contract/spend'
import { systemClock, type Clock } from '../core/types'
import type { CapPeriod } from './spend-periods'
import { periodKey } from './spend-periods'
import {
  capName,
  covers,
  percentOf,
  scopeText,
  type CallScope,
  type CapAlert,
  type CapScope,
  type SpendCap,
} from './spend-caps'
import { formatUsd } from '../../../shared/format'
import { lua } from '../redis/lua'
import { ScriptRunner, type RedisLink } from '../redis/script-runner'

const COMMON = 'caps/common'
const RESERVE = lua('capsReserve', 'caps/reserve', COMMON)
const SENT = lua('capsSent', 'caps/sent', COMMON)
const SETTLE = lua('capsSettle', 'caps/settle', COMMON)
const RELEASE = lua('capsRelease', 'caps/release', COMMON)
const RENEW = lua('capsRenew', 'caps/renew', COMMON)
const VIEWS = lua('capsViews', 'caps/views', COMMON)
const SET = lua('capsSet', 'caps/set', COMMON)
const REMOVE = lua('capsRemove', 'caps/remove', COMMON)
const LOAD = lua('capsLoad', 'caps/load', COMMON)

/** The team caps' scripts, for the client that runs them (team/scripts.ts). */
export const CAP_SCRIPTS = [
  RESERVE,
  SENT,
  SETTLE,
  RELEASE,
  RENEW,
  VIEWS,
  SET,
  REMOVE,
  LOAD,
] as const

/** What a team reservation attempt found. */
export type TeamReservation =
  | { kind: 'uncapped' }
  | { kind: 'reserved'; id: string }
  | { kind: 'wait' }
  | { kind: 'stop'; reason: string }
  /** A team cap covers the call and its model has no price. */
  | { kind: 'unpriced' }

export interface TeamCapsOptions {
  client: RedisLink
  /** @default 'pacer:' */
  prefix?: string
  /** How long a process's reservations outlive its last sign of life. @default 30_000 */
  leaseMs?: number
  clock?: Clock
  /** This process, as its reservations name it. @default host:pid:random */
  owner?: string
}

type Reply = (string | number | Reply)[]

/** The team's caps in the team store: reservations, settlement, and what is left. */
export class TeamCaps {
  readonly #run: ScriptRunner
  readonly #client: RedisLink
  readonly #prefix: string
  readonly #clock: Clock
  readonly leaseMs: number
  readonly owner: string
  /** The caps as last read, and their version ('': not read yet, so the first script says). */
  #version = ''
  #caps: SpendCap[] = []
  #seq = 0
  #renewal: NodeJS.Timeout | null = null
  readonly #inflight = new Set<Promise<unknown>>()
  readonly #alertListeners = new Set<(alert: CapAlert) => void>()
  readonly #failures = new Set<(err: Error) => void>()

  constructor(opts: TeamCapsOptions) {
    this.#client = opts.client
    this.#run = new ScriptRunner(opts.client)
    this.#prefix = opts.prefix ?? 'pacer:'
    this.leaseMs = opts.leaseMs ?? 30_000
    this.#clock = opts.clock ?? systemClock
    this.owner = opts.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  }

  /**
   * Reserves `micros` (null: the model has no price) under every team cap that covers the call,
   * atomically across machines. Waits for the store while it is out of reach.
   */
  async reserve(
    call: CallScope,
    micros: number | null,
    signal?: AbortSignal,
  ): Promise<TeamReservation> {
    const id = String(++this.#seq)
    for (;;) {
      const now = this.#clock.now()
      const pairs = this.#pairs(call, now)
      const r = (await this.#run.call(
        RESERVE,
        [],
        [this.#prefix, this.#version, this.owner, now, this.leaseMs, micros ?? '', id, ...pairs],
        signal,
      )) as Reply
      switch (r[0]) {
        case 'stale':
          this.#load(r)
          continue
        case 'uncapped':
        case 'unpriced':
        case 'wait':
          return { kind: r[0] }
        case 'reserved':
          this.#renewing()
          return { kind: 'reserved', id }
        default: {
          const cap = this.#caps.find((c) => String(c.id) === String(r[1]))!
          const key = String(r[2])
          const spent = Number(r[3])
          if (Number(r[4]) === 1) {
            this.#tell([{ cap, periodKey: key, percent: 100, spentMicros: spent, at: now }])
          }
          return { kind: 'stop', reason: teamStopLine(cap, key, spent, micros ?? 0) }
        }
      }
    }
  }

  /**
   * The call's request is about to go out: from now on its worst case stays counted if this
   * process dies. False when the reservation is gone (this process was taken for dead): then the
   * call must not be sent.
   */
  async markSent(id: string, signal?: AbortSignal): Promise<boolean> {
    const r = await this.#run.call(
      SENT,
      [],
      [this.#prefix, this.owner, id, this.#clock.now(), this.leaseMs],
      signal,
    )
    return Number(r) === 1
  }

  /**
   * The call's ledger row is written: once `committed` resolves (its transaction is on disk; a
   * rolled-back one is settled too, as the call was paid), its reservation goes and its cost is
   * spent under every team cap that covers it. Sent in the background; `settled()` waits for it.
   */
  settle(
    call: CallScope,
    id: string | null,
    costMicros: number | null,
    committed: Promise<void> = Promise.resolve(),
  ): void {
    const cost = costMicros ?? 0
    const at = this.#clock.now()
    // A call that held nothing and that no cap covers (as last read) is the team ledger's alone: a
    // cap set meanwhile started from that ledger's sum. So team mode without caps adds no
    // settlement to a call, only its reserve.
    if (id === null && (cost === 0 || this.#pairs(call, at).length === 0)) return
    const work = committed
      .catch(() => {})
      .then(async () => {
        for (;;) {
          const r = (await this.#run.call(
            SETTLE,
            [],
            [
              this.#prefix,
              this.#version,
              this.owner,
              id ?? '',
              String(cost),
              ...this.#pairs(call, at),
            ],
          )) as Reply
          if (r[0] !== 'stale') return this.#alerts(r, at)
          this.#load(r)
        }
      })
    this.#track(work)
  }

  /** Nothing was sent: the reservation goes back whole (in the background). */
  release(id: string): void {
    this.#track(this.#run.call(RELEASE, [], [this.#prefix, this.owner, id]))
  }

  /** Each team cap with its current period's spent, in doubt, reserved and left. */
  async views(): Promise<SpendCapView[]> {
    const [ver, all] = (await this.#run.call(LOAD, [], [this.#prefix])) as [string, Reply]
    this.#load(['stale', ver, all])
    const now = this.#clock.now()
    const keys = this.#caps.map((c) => periodKey(now, c.period, c.zone))
    const r = (await this.#run.call(
      VIEWS,
      [],
      [this.#prefix, now, ...this.#caps.flatMap((c, i) => [String(c.id), keys[i]!])],
    )) as string[]
    return this.#caps.map((cap, i) => {
      const [spent, inDoubt, reserved] = [0, 1, 2].map((j) => Number(r[4 * i + j]))
      const warned = r[4 * i + 3]
      return {
        ...cap,
        warnedPercent: warned ? Number(warned) : null,
        periodKey: keys[i]!,
        scope: scopeText(cap),
        spentMicros: spent!,
        inDoubtMicros: inDoubt!,
        reservedMicros: reserved!,
        leftMicros: Math.max(0, cap.capMicros - spent! - inDoubt! - reserved!),
        percent: percentOf(spent! + inDoubt!, cap.capMicros),
      }
    })
  }

  /**
   * Adds a team cap, or changes the amount of the one with the same scope, period and zone.
   * `spentSoFar` (the team ledger's sum over the scope and the current period) is where a new
   * cap's spend starts; a changed cap keeps the spend the team settled. Returns its id.
   */
  async set(scope: CapScope, capMicros: number, spentSoFar: number): Promise<number> {
    const key = periodKey(this.#clock.now(), scope.period, scope.zone)
    const r = await this.#run.call(
      SET,
      [],
      [this.#prefix, scopeJson(scope), capMicros, key, spentSoFar],
    )
    return Number(r)
  }

  /** Removes a team cap; false when there was none. */
  async remove(id: number): Promise<boolean> {
    return Number(await this.#run.call(REMOVE, [], [this.#prefix, String(id)])) === 1
  }

  /** Hears each warning threshold a settlement crosses (once per cap and period, whole team). */
  onAlert(listener: (alert: CapAlert) => void): () => void {
    this.#alertListeners.add(listener)
    return () => this.#alertListeners.delete(listener)
  }

  /** Hears a settlement or release the store refused (not an outage: those wait). */
  onFailure(listener: (err: Error) => void): () => void {
    this.#failures.add(listener)
    return () => this.#failures.delete(listener)
  }

  /** Resolves once every settlement and release begun so far has ended. */
  async settled(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
  }

  /** Stops renewing this process's lease (its last settlements are awaited by the caller). */
  stop(): void {
    if (this.#renewal) clearInterval(this.#renewal)
    this.#renewal = null
  }

  /** The caps covering the call as (id, period key) pairs, from the caps as last read. */
  #pairs(call: Omit<CallScope, 'batchId'>, now: number): string[] {
    const out: string[] = []
    for (const c of this.#caps) {
      if (covers(c, call)) out.push(String(c.id), periodKey(now, c.period, c.zone))
    }
    return out
  }

  #load(r: Reply): void {
    this.#version = String(r[1])
    const all = r[2] as string[]
    const caps: SpendCap[] = []
    for (let i = 0; i < all.length; i += 2) {
      const [amount, scope] = splitOnce(all[i + 1]!, '|')
      const [taskType, provider, model, period, zone] = JSON.parse(scope) as [
        string | null,
        string | null,
        string | null,
        CapPeriod,
        string,
      ]
      caps.push({
        id: Number(all[i]),
        taskType,
        provider,
        model,
        period,
        zone,
        capMicros: Number(amount),
      })
    }
    this.#caps = caps.sort((a, b) => a.id - b.id)
  }

  #alerts(r: Reply, at: number): void {
    const alerts: CapAlert[] = []
    for (let i = 1; i + 3 < r.length; i += 4) {
      const cap = this.#caps.find((c) => String(c.id) === String(r[i]))
      if (!cap) continue
      alerts.push({
        cap,
        periodKey: String(r[i + 1]),
        percent: Number(r[i + 2]),
        spentMicros: Number(r[i + 3]),
        at,
      })
    }
    this.#tell(alerts)
  }

  #tell(alerts: CapAlert[]): void {
    for (const a of alerts) for (const l of this.#alertListeners) l(a)
  }

  /** While this process holds reservations its lease is renewed: a third of it at a time. */
  #renewing(): void {
    if (this.#renewal) return
    this.#renewal = setInterval(
      () => {
        if (!this.#client.isReady) return
        this.#run
          .once(RENEW, [], [this.#prefix, this.owner, this.#clock.now(), this.leaseMs])
          .catch(() => {})
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    )
    this.#renewal.unref()
  }

  #track(work: Promise<unknown>): void {
    const done = work.then(
      () => {},
      (err: Error) => {
        for (const l of this.#failures) l(err)
      },
    )
    this.#inflight.add(done)
    void done.then(() => this.#inflight.delete(done))
  }
}

/** The scope as the store keeps it: the same text for the same scope, period and zone. */
function scopeJson(s: CapScope): string {
  return JSON.stringify([s.taskType, s.provider, s.model, s.period, s.zone])
}

function splitOnce(text: string, sep: string): [string, string] {
  const at = text.indexOf(sep)
  return [text.slice(0, at), text.slice(at + 1)]
}

/** The line a team cap's stop says (as the database's, naming the team). */
export function teamStopLine(cap: SpendCap, key: string, spent: number, next: number): string {
  const period = cap.period === 'total' ? '' : ` for ${key}`
  return (
    `held by budget: the team's ${capName(cap).replace(/^the /, '')} is ${formatUsd(cap.capMicros)}${period}, ` +
    `${formatUsd(spent)} spent across the team; the next call may cost up to ${formatUsd(next)} ` +
    `(raise it with pacer budgets set --store)`
  )
}
