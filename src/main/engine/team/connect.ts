// Team mode's connection: one node-redis client per process, its pacing store, and what an
// operator must see of it (the server gone, the server back). The start fails at once when the
// server is not there (a wrong address is likelier than an outage at that moment); after that an
// outage only pauses admission until the client reconnects. Every call has a deadline: the start
// (connect, handshake, the first scripts) and each command after it (redis/deadline.ts), so a
// server that accepts the connection and never answers is an outage said within seconds, not a
// silent hang, and closing never waits on it for more than a moment.
import { backoff } from '../core/backoff'
import type { StoreAddress } from './store-url'
import { maskUrl } from './store-url'
import { RedisPacingStore } from '../pacing/store-redis'
import { RedisClaimStore } from '../claims/redis/claims-redis'
import { RedisLedgerStream } from './ledger/stream'
import { TeamCaps } from '../pacing/team-caps'
import { TEAM_SCRIPTS, clientScripts } from './scripts'
import { DeadlineLink, within } from '../redis/deadline'

/** The team store is unreachable (or gone, or back): what the run and the console show. */
export interface TeamStoreStatus {
  up: boolean
  /** `team store redis://host:port/0 unreachable (ECONNREFUSED): admission paused` and the like. */
  message: string
}

export interface TeamStore {
  readonly address: StoreAddress
  readonly pacing: RedisPacingStore
  /** The team's claims: each distinct task executed once across every machine on the server. */
  readonly claims: RedisClaimStore
  /** The team ledger's stream: every machine's rows (team-ledger/). */
  readonly ledger: RedisLedgerStream
  /** The team's spend caps: reserved, settled and counted across every machine (caps.ts). */
  readonly caps: TeamCaps
  /** Tells the status listeners something of the store's that is not the connection's. */
  report(status: TeamStoreStatus): void
  /** null while connected. */
  readonly down: TeamStoreStatus | null
  onStatus(listener: (status: TeamStoreStatus) => void): () => void
  close(): Promise<void>
}

export class TeamStoreUnreachable extends Error {}

/** A lost connection's retries: 100 ms doubling to once a second. */
const reconnects = backoff({ initialMs: 100, maxMs: 1000 })

export interface ConnectOptions {
  /** @default 30_000 */
  leaseMs?: number
  /** Keys' prefix, so several teams (or tests) can share one server. @default 'pacer:' */
  prefix?: string
  /** The start's deadline: connected, logged in and the first scripts answered. @default 5000 */
  connectTimeoutMs?: number
  /** Each command's deadline; the first one missed pauses admission until the server answers. @default 5000 */
  commandTimeoutMs?: number
  /** After a server that lost its claims is found, nobody claims for this long. @default 3000 */
  reseedGraceMs?: number
}

/** Connects to the team store; throws TeamStoreUnreachable naming host:port and the cause. */
export async function connectTeamStore(
  address: StoreAddress,
  options: ConnectOptions = {},
): Promise<TeamStore> {
  const where = `${address.host}:${address.port}`
  const connectMs = options.connectTimeoutMs ?? 5000
  const commandMs = options.commandTimeoutMs ?? 5000
  let connected = false
  const client = await createTeamClient(address, connectMs, () => connected)
  const listeners = new Set<(status: TeamStoreStatus) => void>()
  // What the stores use: the client with a deadline on each command (redis/deadline.ts).
  const link = new DeadlineLink(client, commandMs, SCRIPT_METHODS, () => {
    if (!connected || down) return
    down = { up: false, message: notAnsweringLine(address, commandMs) }
    tell(down)
  })
  const pacing = new RedisPacingStore({
    client: link,
    prefix: options.prefix,
    leaseMs: options.leaseMs,
  })
  let down: TeamStoreStatus | null = null
  const tell = (status: TeamStoreStatus) => {
    pacing.outage = status.up ? null : status.message
    for (const l of listeners) l(status)
  }
  let lastCause = ''
  client.on('error', (err: Error) => {
    lastCause = causeOf(err, address.password)
    if (!connected || down) return
    down = {
      up: false,
      message: `team store ${address.display} unreachable (${lastCause}): admission paused until it answers`,
    }
    tell(down)
  })
  link.on('ready', () => {
    if (!down) return
    down = null
    tell({ up: true, message: `team store ${address.display} answers again: admission resumed` })
  })
  // A server that accepts and never answers holds the handshake (node-redis times out only the TCP
  // connect): the whole start has one deadline.
  const silent = () =>
    new TeamStoreUnreachable(
      `team store ${where} not answering for ${connectMs / 1000} s: connected, but no reply (a stalled server, or not Redis)`,
    )
  try {
    await within(client.connect(), connectMs, silent)
  } catch (err) {
    client.destroy()
    if (err instanceof TeamStoreUnreachable) throw err
    const cause = causeOf(err as Error, address.password) || lastCause
    const what = /check the password/.test(cause) ? 'refused the login' : 'unreachable'
    throw new TeamStoreUnreachable(`team store ${where} ${what}: ${cause}`)
  }
  connected = true
  // Pub/sub takes a connection of its own: the waiters' doorbell (claims-redis.ts).
  const subscriber = client.duplicate()
  subscriber.on('error', () => {})
  const claims = new RedisClaimStore({
    client: link,
    subscriber,
    prefix: options.prefix,
    reseedGraceMs: options.reseedGraceMs,
    display: address.display,
    onStatus: (message) => {
      for (const l of listeners) l({ up: true, message })
    },
  })
  try {
    await within(
      (async () => {
        await subscriber.connect()
        await claims.start()
      })(),
      connectMs,
      silent,
    )
  } catch (err) {
    claims.stop()
    subscriber.destroy()
    client.destroy()
    if (err instanceof TeamStoreUnreachable) throw err
    throw new TeamStoreUnreachable(
      `team store ${where} unreachable: ${causeOf(err as Error, address.password)}`,
    )
  }
  const ledger = new RedisLedgerStream(link, options.prefix)
  const caps = new TeamCaps({ client: link, prefix: options.prefix, leaseMs: options.leaseMs })
  return {
    address,
    pacing,
    claims,
    ledger,
    caps,
    report(status) {
      for (const l of listeners) l(status)
    },
    get down() {
      return down
    },
    onStatus(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async close() {
      listeners.clear()
      await closeStores({ link, pacing, claims, caps }, [client, subscriber], commandMs)
    },
  }
}

/**
 * The last releases and settlements are on their way: the others must not wait for a lease to
 * see them. A server that does not answer gets no more than the deadline: close() waits for
 * every reply it owes, so it is destroyed after that (its leases give the slots back).
 */
async function closeStores(
  stores: { link: DeadlineLink; pacing: RedisPacingStore; claims: RedisClaimStore; caps: TeamCaps },
  clients: TeamClient[],
  commandMs: number,
): Promise<void> {
  const { link, pacing, claims, caps } = stores
  claims.stop()
  caps.stop()
  if (link.isReady)
    await Promise.race([
      Promise.all([pacing.settled(), claims.settled(), caps.settled()]),
      delay(5000),
    ])
  await Promise.all(clients.map((c) => closeWithin(c, commandMs)))
}

const SCRIPT_METHODS = TEAM_SCRIPTS.map((s) => s.method)

/** The outage of a server that keeps the connection and does not answer. */
function notAnsweringLine(address: StoreAddress, ms: number): string {
  return `team store ${address.display} not answering for ${ms / 1000} s (connected, no reply: a stalled server or a half-open connection): admission paused until it answers`
}

type TeamClient = Awaited<ReturnType<typeof createTeamClient>>

/** node-redis's client for the store: not connected yet; `connected` once the start is done. */
async function createTeamClient(
  address: StoreAddress,
  connectMs: number,
  connected: () => boolean,
) {
  // Loaded here, in team mode only: every other command paid ~0.25 s of CPU at start for it.
  const { createClient, defineScript } = await import('@redis/client')
  return createClient({
    socket: {
      host: address.host,
      port: address.port,
      tls: address.tls as false,
      connectTimeout: connectMs,
      // Before the first connection: give up (the start fails). After: try again, up to once a
      // second, for as long as it takes; admission waits meanwhile.
      reconnectStrategy: (retries, cause) => (connected() ? reconnects.delay(retries) : cause),
    },
    ...(address.username === undefined ? {} : { username: address.username }),
    ...(address.password === undefined ? {} : { password: address.password }),
    database: address.db,
    name: 'pacer',
    // A command sent while disconnected fails at once instead of running late on a stale clock.
    disableOfflineQueue: true,
    // The stores' Lua scripts, each a method of the client (scripts.ts).
    scripts: clientScripts(defineScript),
  })
}

/** close() waits for every reply the server owes: one that does not answer is destroyed. */
async function closeWithin(client: TeamClient, ms: number): Promise<void> {
  if (!client.isReady) return client.destroy()
  const closed = await Promise.race([client.close().then(() => true), delay(ms).then(() => false)])
  if (!closed) client.destroy()
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

/** An error's cause in one line: the errno, or Redis's own words; never the password. */
function causeOf(err: Error, password: string | undefined): string {
  const code = (err as { code?: unknown }).code
  let text = typeof code === 'string' && code !== '' ? code : err.message || err.name
  if (/WRONGPASS|NOAUTH|invalid password|invalid username/i.test(err.message)) {
    text = `${err.message.split('\n')[0]} (check the password: the URL or PACER_REDIS_PASSWORD)`
  }
  text = maskUrl(text)
  return password ? text.split(password).join('***') : text
}
