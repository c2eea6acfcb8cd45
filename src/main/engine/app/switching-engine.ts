// One Engine for the transports while the engine behind it is replaced once: a console process
// (desktop, `pacer serve`) that started alone reopens its engine in team mode when its store
// answers (team-join.ts). The bindings keep what they were given at start: commands, event
// subscriptions and warning listeners follow the swap, and commands wait while it happens.
import { EventEmitter } from 'node:events'
import type {
  CommandHandlers,
  CommandName,
  EventName,
  EventPayloads,
} from '../../../shared/contract'
import type { Engine } from './engine'

/** An Engine whose inner engine can be replaced while nothing runs in it. */
export interface SwitchingEngine {
  readonly engine: Engine
  /** The engine now. */
  current(): Engine
  /**
   * Replaces the engine when no command or export is under way and `ready(old)` says so (else
   * resolves false, nothing changed): commands wait meanwhile, the old engine is shut down and
   * `next()` opened. Resolves true when the engine was replaced.
   */
  swap(ready: (old: Engine) => boolean, next: () => Engine): Promise<boolean>
  /** Calls `use` after every swap (with the engine the transports hold, as at start). */
  afterSwap(use: () => void): void
  /** Resolves when no swap is under way. */
  settled(): Promise<void>
  /** An event of this process's own, to every subscriber of the engine. */
  emit<E extends EventName>(event: E, payload: EventPayloads[E]): void
}

type Handler = (input: unknown) => unknown

const PARTS = [
  'db',
  'dbPath',
  'queue',
  'ledger',
  'scheduler',
  'runner',
  'claims',
  'prices',
  'settings',
  'results',
  'budgets',
  'batchApi',
  'batches',
  'agents',
] as const
type PartName = (typeof PARTS)[number]

/** The engine's parts, each read from the engine of the moment. */
function forwardParts(get: () => Engine): Pick<Engine, PartName> {
  const parts = {}
  for (const key of PARTS) Object.defineProperty(parts, key, { get: () => get()[key] })
  return parts as Pick<Engine, PartName>
}

export interface SwitchingOptions {
  /** Commands answered here instead of by the inner engine (they never wait for a swap). */
  overrides?: Partial<Record<CommandName, Handler>>
  /** Runs first when the engine shuts down. */
  beforeShutdown?: () => Promise<void>
}

/** Wraps `first` until a swap replaces it. */
export function switchingEngine(first: Engine, options: SwitchingOptions = {}): SwitchingEngine {
  const { overrides = {}, beforeShutdown } = options
  let current = first
  const own = new EventEmitter().setMaxListeners(0)
  let started = false
  let gate: Promise<void> | null = null
  /** Commands and exports under way: the engine is not replaced under them. */
  let inflight = 0
  const swapped = new Set<() => void>()
  // Each listener attached to the inner engine, re-attached to the next one after a swap.
  const followers = new Set<{ attach: (e: Engine) => () => void; off: () => void }>()
  const follow = (attach: (e: Engine) => () => void) => {
    const f = { attach, off: attach(current) }
    followers.add(f)
    return () => {
      f.off()
      followers.delete(f)
    }
  }

  const settled = async () => {
    while (gate) await gate
  }
  const track = <T>(out: T): T => {
    if (!(out instanceof Promise)) return out
    inflight++
    return out.finally(() => inflight--) as T
  }
  const call = (name: CommandName, input: unknown): unknown =>
    track((current.handlers[name] as Handler)(input))
  const handlers: Record<string, Handler> = {}
  for (const name of Object.keys(first.handlers) as CommandName[]) {
    handlers[name] =
      overrides[name] ??
      ((input) => (gate ? gate.then(() => call(name, input)) : call(name, input)))
  }

  const engine: Engine = Object.assign(
    forwardParts(() => current),
    {
      handlers: handlers as unknown as CommandHandlers,
      subscribe(event, listener) {
        own.on(event, listener)
        const off = follow((e) => e.subscribe(event, listener))
        return () => {
          own.off(event, listener)
          off()
        }
      },
      onWarning: (listener) => follow((e) => e.onWarning(listener)),
      heldAnswers: () => current.heldAnswers(),
      exportCsv: (...args) => track(current.exportCsv(...args)),
      exportResults: (...args) => track(current.exportResults(...args)),
      resolve: (...args) => current.resolve(...args),
      keyRefusals: (scope) => current.keyRefusals(scope),
      enqueue: (...args) => current.enqueue(...args),
      start() {
        started = true
        current.start()
      },
      abort: () => current.abort(),
      async shutdown(opts) {
        await beforeShutdown?.()
        await settled()
        await current.shutdown(opts)
      },
    } satisfies Omit<Engine, PartName>,
  )

  return {
    engine,
    current: () => current,
    async swap(ready, next) {
      // Not under a command or an export under way (an import may be about to start a batch):
      // the caller tries again later, rather than holding every other command until it ends.
      if (gate || inflight > 0 || !ready(current)) return false
      let open!: () => void
      gate = new Promise((resolve) => (open = resolve))
      try {
        const old = current
        for (const f of followers) f.off()
        await old.shutdown({ graceMs: 0 })
        current = next()
        for (const f of followers) f.off = f.attach(current)
        if (started) current.start()
        for (const use of swapped) use()
        return true
      } finally {
        gate = null
        open()
      }
    },
    afterSwap(use) {
      swapped.add(use)
    },
    settled,
    emit(event, payload) {
      own.emit(event, payload)
    },
  }
}
