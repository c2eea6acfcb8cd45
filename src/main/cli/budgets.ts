// `pacer budgets`: the spend caps kept in the database, through the engine's contract handlers
// (the console's Budgets section calls the same ones).
import { parseCommand, type SpendCapView } from '../../shared/contract'
import { formatUsd } from '../../shared/format'
import { microsToUsd } from '../../shared/money'
import type { Engine } from '../engine'
import { localZone } from '../engine'
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
}

/** `pacer budgets`: every cap with spend, reserved and left in its current period. */
export async function budgetsListCommand(opts: { db?: string; json?: boolean }): Promise<number> {
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
  const engine = withEngine(opts.db)
  try {
    const input = parseCommand('budgets:set', {
      usd: amount,
      taskType: opts.type,
      provider,
      model,
      period: opts.daily ? 'day' : opts.monthly ? 'month' : 'total',
      zone: opts.zone ?? (opts.localTime ? localZone() : undefined),
    })
    if (!input.ok) throw new UsageError(input.error.message)
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
export async function budgetsRemoveCommand(id: string, opts: { db?: string }): Promise<number> {
  if (!/^\d+$/.test(id) || Number(id) < 1) {
    throw new UsageError(`ID: expected a cap id from pacer budgets, got "${id}"`)
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

function print(caps: SpendCapView[], json: boolean): void {
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
      'no spend caps: add one with pacer budgets set USD [--daily] [--type T] [--model P/M]\n',
    )
    return
  }
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
