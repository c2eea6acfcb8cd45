// `pacer budgets`: the spend caps kept in the database, through the engine's contract handlers
// (the console's Budgets section calls the same ones).
import { parseCommand, type SpendCapView } from '../../shared/contract'
import { formatUsd } from '../../shared/format'
import { microsToUsd } from '../../shared/money'
import type { Engine, TeamStore } from '../engine'
import { localZone, setTeamCap } from '../engine'
import { UsageError, dbPathFrom, openEngine, openReader, table } from './common'
import { EXIT } from './exit-codes'
import { say } from './terminal-text'

interface SetOptions {
  db?: string
  type?: string
  model?: string
  provider?: string
  daily?: boolean
  monthly?: boolean
  localTime?: boolean
  zone?: string
  json?: boolean
  /** The team's caps (team mode's store) instead of the database's. */
  store?: string | true
}

/** Runs `use` on the team store of `--store` (loaded only then). */
async function onTeam<T>(
  opts: { db?: string; store: string | true },
  use: (team: TeamStore) => Promise<T>,
): Promise<T> {
  const { withTeam } = await import('./team-ledger-commands')
  return withTeam(opts, use)
}

/** `pacer budgets`: every cap with spend, reserved and left in its current period. */
export async function budgetsListCommand(opts: {
  db?: string
  json?: boolean
  store?: string | true
}): Promise<number> {
  const { store } = opts
  if (store !== undefined) {
    return onTeam({ ...opts, store }, async (team) => {
      print(await team.caps.views(), opts.json === true, team.address.display)
      return EXIT.done
    })
  }
  const engine = openReader(opts.db)
  try {
    print(await engine.handlers['budgets:list']({}), opts.json === true)
    return EXIT.done
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** `pacer budgets set USD [...]`: adds a cap or changes the amount of the same one. */
export async function budgetsSetCommand(amount: number, opts: SetOptions): Promise<number> {
  let provider = opts.provider
  let model: string | undefined
  if (opts.model !== undefined) {
    const slash = opts.model.indexOf('/')
    if (slash <= 0 || slash === opts.model.length - 1) {
      throw new UsageError(
        `--model: expected PROVIDER/MODEL (openai/gpt-4o-mini), got "${opts.model}"`,
      )
    }
    if (provider !== undefined && provider !== opts.model.slice(0, slash)) {
      throw new UsageError(`--provider ${provider} and --model ${opts.model} name two providers`)
    }
    provider = opts.model.slice(0, slash)
    model = opts.model.slice(slash + 1)
  }
  const input = parseCommand('budgets:set', {
    usd: amount,
    taskType: opts.type,
    provider,
    model,
    period: opts.daily ? 'day' : opts.monthly ? 'month' : 'total',
    zone: opts.zone ?? (opts.localTime ? localZone() : undefined),
  })
  if (!input.ok) throw new UsageError(input.error.message)
  const { store } = opts
  if (store !== undefined) {
    return onTeam({ ...opts, store }, async (team) => {
      const id = await call(() => setTeamCap(team, input.value))
      const caps = await team.caps.views()
      const cap = caps.find((c) => c.id === id)
      if (!opts.json && cap) say.err(`pacer: team cap ${cap.id} set: ${line(cap)}\n`)
      print(caps, opts.json === true, team.address.display)
      return EXIT.done
    })
  }
  const engine = withEngine(opts.db)
  try {
    const reply = await call(() => engine.handlers['budgets:set'](input.value))
    const cap = reply.caps.find((c) => c.id === reply.id)
    if (!opts.json && cap) say.err(`pacer: cap ${cap.id} set: ${line(cap)}\n`)
    print(reply.caps, opts.json === true)
    return EXIT.done
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/** `pacer budgets remove ID`. */
export async function budgetsRemoveCommand(
  id: string,
  opts: { db?: string; store?: string | true },
): Promise<number> {
  if (!/^\d+$/.test(id) || Number(id) < 1) {
    throw new UsageError(`ID: expected a cap id from pacer budgets, got "${id}"`)
  }
  const { store } = opts
  if (store !== undefined) {
    return onTeam({ ...opts, store }, async (team) => {
      if (!(await team.caps.remove(Number(id)))) {
        throw new UsageError(`id: no team spend cap ${id} at ${team.address.display}`)
      }
      say.err(`pacer: team cap ${id} removed\n`)
      return EXIT.done
    })
  }
  const engine = withEngine(opts.db)
  try {
    await call(() => engine.handlers['budgets:remove']({ id: Number(id) }))
    say.err(`pacer: cap ${id} removed\n`)
    return EXIT.done
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

function withEngine(db: string | undefined): Engine {
  return openEngine({ dbPath: dbPathFrom(db) })
}

/** A handler's refusal (a bad zone, no such cap) is the user's input: one line, exit 2. */
async function call<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if ((err as Error).name === 'EngineError') throw new UsageError((err as Error).message)
    throw err
  }
}

const HEADERS = ['id', 'cap on', 'period', 'cap', 'spent', 'reserved', 'left', 'used']

function periodText(c: SpendCapView): string {
  return c.period === 'total' ? 'all time' : `${c.periodKey} (${c.zone})`
}

function line(c: SpendCapView): string {
  return `${formatUsd(c.capMicros)} on ${c.scope}, ${c.period === 'total' ? 'all time' : `per ${c.period} (${c.zone})`}`
}

/** The caps as a table (or JSON); `team`: the store they are the team's caps of. */
function print(caps: SpendCapView[], json: boolean, team?: string): void {
  if (json) {
    say.out(
      `${JSON.stringify(
        caps.map((c) => ({
          ...c,
          capUsd: microsToUsd(c.capMicros),
          spentUsd: microsToUsd(c.spentMicros),
          inDoubtUsd: microsToUsd(c.inDoubtMicros),
          reservedUsd: microsToUsd(c.reservedMicros),
          leftUsd: microsToUsd(c.leftMicros),
        })),
      )}\n`,
    )
    return
  }
  if (caps.length === 0) {
    say.out(
      team === undefined
        ? 'no spend caps: add one with pacer budgets set USD [--daily] [--type T] [--model P/M]\n'
        : `no team spend caps at ${team}: add one with pacer budgets set USD --store [--daily] [--type T] [--model P/M]\n`,
    )
    return
  }
  if (team !== undefined) say.out(`team caps at ${team} (spend across every machine on it):\n`)
  const rows = caps.map((c) => [
    c.id,
    c.scope,
    periodText(c),
    formatUsd(c.capMicros),
    formatUsd(c.spentMicros) +
      (c.inDoubtMicros > 0 ? ` (+${formatUsd(c.inDoubtMicros)} in doubt)` : ''),
    formatUsd(c.reservedMicros),
    formatUsd(c.leftMicros),
    `${c.percent}%`,
  ])
  say.out(`${table(HEADERS, rows)}\n`)
}
