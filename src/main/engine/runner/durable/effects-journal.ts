// Effects of one execution on the call journal: each chat and step takes the next index; while the
// journal of an earlier run of the same execution matches (same index, same request), its answer
// is handed back and ledgered `replayed`; from the first effect it does not answer, everything
// runs live, journaled as it goes (an intent before each request, the answer with its ledger row).
import { parseExactJson } from '../../../../shared/exact-json'
import type { CallJournal, EntryKey, JournaledAnswer, JournalEntry } from './journal'
import { ENTRY_STATES, EFFECT_KINDS, requestHash } from './journal'
import type { TaskLog } from './task-log'
import type { JsonValue, RequestParams, Usage } from '../../core/types'
import { callProvider, type PaidAnswer } from '../call'
import { StopSignal, type Active, type RunContext } from '../context'
import { EffectStop, type ChatAnswer, type ChatRequest, type Effects } from './effects'
import { addUsage, ledgerRow, ZERO_USAGE } from '../ledger-rows'

/** A rerun's request at `index` differed from the journal: the replay ended there. */
export interface DivergenceEvent {
  taskId: number
  batchId: string
  index: number
  kind: 'call' | 'step'
}

/** Where an execution's effects are kept: none for an audit-mode duplicate or a bare runner. */
export interface JournalParts {
  journal: CallJournal
  log: TaskLog
}

/**
 * The Effects an execution's driver gets. Totals (usage, cost, calls) cover every call of the
 * execution, replayed ones at what they cost when they were paid: what the result is worth.
 */
export class JournaledEffects implements Effects {
  readonly #ctx: RunContext
  readonly #active: Active
  readonly #epoch: number | null
  readonly #parts: JournalParts | null
  readonly #log: TaskLog | null
  readonly #onDivergence: (e: DivergenceEvent) => void
  /** The epoch of a previous owner still alive: its intents are calls it will answer itself. */
  readonly #liveEpoch: number | null
  /** What an earlier run journaled, while the replay lasts; null once it ended (or none). */
  #replay: Map<number, JournalEntry> | null
  #index = 0
  readonly usage: Usage = { ...ZERO_USAGE }
  #cost: number | null = 0
  /** Provider calls made or replayed. */
  calls = 0
  /** Calls the journal answered. */
  replayed = 0
  /**
   * What the runner ended an effect with (a stop, pause or cancel, a stopped partition, a busy
   * database), if it did. The execution ends with it whatever its driver made of it: a handler
   * that catches or wraps the refusal of its next call must not turn Ctrl-C into its own failure.
   */
  #runnerEnd: { error: unknown } | null = null

  constructor(
    ctx: RunContext,
    active: Active,
    epoch: number | null,
    parts: JournalParts | null,
    onDivergence: (e: DivergenceEvent) => void,
    opts: { liveEpoch?: number | null } = {},
  ) {
    this.#liveEpoch = opts.liveEpoch ?? null
    this.#ctx = ctx
    this.#active = active
    this.#epoch = epoch
    // Audit-mode duplicates own no claim: they neither replay nor journal.
    this.#parts = epoch === null ? null : parts
    this.#log = parts?.log ?? null
    this.#onDivergence = onDivergence
    // A first claim (epoch 1) has never run: nothing to read.
    const entries =
      this.#parts && epoch !== 1 ? this.#parts.journal.entries(active.task.fpId) : null
    this.#replay = entries && entries.size > 0 ? entries : null
  }

  /** The index of the latest effect (the one that failed, when one did). */
  get index(): number {
    return this.#index
  }

  get signal(): AbortSignal {
    return this.#active.controller.signal
  }

  /** The runner's end an effect met (see #runnerEnd); null when none did. */
  get runnerEnd(): { error: unknown } | null {
    return this.#runnerEnd
  }

  /** What the execution's calls cost: null once one is unpriced, or when there was none. */
  get costMicros(): number | null {
    return this.calls === 0 ? null : this.#cost
  }

  async chat(request: ChatRequest): Promise<ChatAnswer> {
    const { task } = this.#active
    const index = ++this.#index
    const provider = request.provider ?? task.provider
    const model = request.model ?? task.model
    const params = request.params ?? this.#taskParams()
    const messages = request.messages
    const hash = this.#parts ? requestHash('call', { messages, model, provider, params }) : null
    const entry = hash ? this.#replayed(index, 'call', hash) : undefined
    if (entry?.state === ENTRY_STATES.answered)
      return this.#replayCall(index, entry, provider, model)
    const target = this.#ctx.o.provider(provider)
    if (!target) throw new EffectStop('failed', `unknown provider "${provider}"`)
    const key = hash ? this.#key(index, 'call', hash) : null
    const answerLost =
      entry?.state === ENTRY_STATES.sent &&
      (this.#liveEpoch === null || entry.epoch !== this.#liveEpoch)
    const result = await this.#runnerEnds(() =>
      callProvider(this.#ctx, this.#active, target, {
        messages: [...messages],
        step: index,
        provider,
        model,
        epoch: this.#epoch,
        params,
        maxOutputTokens: params?.max_tokens,
        answerLost,
        beforeSend: key ? () => this.#parts!.journal.intent(key) : undefined,
        onAnswer: key ? (paid) => this.#answer(key, paid, provider, model) : undefined,
        // A refusal, an error, an abort (Ctrl-C, cancel) is on the ledger: no answer was lost.
        // Only a crash or a failed write leaves the intent: the rerun's call is then a duplicate.
        onUnanswered: key ? () => this.#parts!.journal.forget(key) : undefined,
      }),
    )
    if (result.kind === 'lost') throw new EffectStop('lost', 'the claim was taken over')
    if (result.kind === 'failed') {
      const { error, status, deterministic, keep } = result
      throw new EffectStop('failed', error, status, deterministic, keep)
    }
    if (answerLost) {
      this.#logLine('lost', `call ${index}: paid again, its first answer was lost`)
    }
    this.#count(result.usage, result.costMicros)
    return {
      text: result.text,
      message: result.message ?? null,
      usage: result.usage,
      finishReason: result.finishReason ?? null,
      costMicros: result.costMicros,
      replayed: false,
    }
  }

  async step<T extends JsonValue>(name: string, fn: () => Promise<T> | T): Promise<T> {
    if (typeof name !== 'string' || name === '') {
      throw new TypeError(`ctx.step needs a name (a non-empty string), got ${JSON.stringify(name)}`)
    }
    const index = ++this.#index
    const hash = this.#parts ? requestHash('step', name) : null
    const entry = hash ? this.#replayed(index, 'step', hash) : undefined
    if (entry?.state === ENTRY_STATES.answered && entry.body !== null) {
      this.#logLine('step', `step ${index} "${name}": replayed from the journal`)
      return (JSON.parse(entry.body) as { value: T }).value
    }
    const stop = this.#active.stopped ?? (this.#ctx.stopping() ? new StopSignal('stop') : null)
    if (stop) throw this.#ended(stop)
    if (this.#active.lost) throw new EffectStop('lost', 'the claim was taken over')
    const started = this.#ctx.o.clock.now()
    const value = await fn()
    const body = JSON.stringify({ value })
    if (value === undefined || body === undefined) {
      throw new TypeError(`ctx.step "${name}" must return a JSON value, got ${typeof value}`)
    }
    if (hash && !this.#active.lost) {
      this.#parts!.journal.answer(this.#key(index, 'step', hash), body, null)
      // Its duration too: the trace's execute_tool span starts that long before the line.
      const ms = Math.max(0, this.#ctx.o.clock.now() - started)
      this.#logLine('step', `step ${index} "${name}": ran in ${ms} ms`)
    }
    return JSON.parse(body).value as T
  }

  log(message: string): void {
    this.#logLine('log', message)
  }

  /** The result is stored: the journal of this execution is no longer needed. */
  close(): void {
    this.#parts?.journal.drop(this.#active.task.fpId)
  }

  /**
   * Runs the runner's part of an effect: what it throws, other than the effect's own EffectStop,
   * is the runner's end (the built-in loop lets it go up as it is).
   */
  async #runnerEnds<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      throw err instanceof EffectStop ? err : this.#ended(err)
    }
  }

  #ended(err: unknown): unknown {
    this.#runnerEnd ??= { error: err }
    return err
  }

  #taskParams(): RequestParams | undefined {
    const { params } = this.#active.task
    return params === null ? undefined : (parseExactJson(params) as RequestParams)
  }

  /**
   * The journal's entry at `index` while the replay lasts: answered (replay it) or sent (its
   * answer was lost). Any other case ends the replay here: a request that differs is a divergence.
   */
  #replayed(index: number, kind: 'call' | 'step', hash: Buffer): JournalEntry | undefined {
    if (this.#replay === null) return undefined
    const entry = this.#replay.get(index)
    const same = entry !== undefined && entry.kind === EFFECT_KINDS[kind] && entry.hash.equals(hash)
    if (same && entry.state === ENTRY_STATES.answered) return entry
    // The replay ends here: whatever was journaled from here on belongs to another path.
    this.#replay = null
    this.#parts!.journal.dropFrom(this.#active.task.fpId, index)
    if (entry !== undefined && !same) this.#diverged(index, kind)
    return same ? entry : undefined
  }

  #diverged(index: number, kind: 'call' | 'step'): void {
    const { task } = this.#active
    this.#logLine(
      'divergence',
      `${kind} ${index} differs from the journal of an earlier run: the replay ended there, the rest runs live`,
    )
    this.#onDivergence({ taskId: task.id, batchId: task.batchId, index, kind })
  }

  #replayCall(index: number, entry: JournalEntry, provider: string, model: string): ChatAnswer {
    const { o } = this.#ctx
    if (this.#active.lost) throw new EffectStop('lost', 'the claim was taken over')
    const answer = JSON.parse(entry.body!) as JournaledAnswer
    o.ledger.record({
      ...ledgerRow(o, this.#active.task, index, this.#epoch),
      provider,
      model,
      usage: ZERO_USAGE,
      outcome: 'replayed',
      latencyMs: null,
      status: null,
      savedMicros: entry.costMicros,
    })
    this.replayed++
    this.#count(answer.usage, entry.costMicros)
    return {
      text: answer.text,
      message: (answer.message ?? null) as JsonValue | null,
      usage: answer.usage,
      finishReason: (answer.finishReason ?? null) as ChatAnswer['finishReason'],
      costMicros: entry.costMicros,
      replayed: true,
    }
  }

  #answer(key: EntryKey, paid: PaidAnswer, provider: string, model: string): void {
    const { response } = paid
    const body: JournaledAnswer = {
      text: response.text ?? '',
      message: response.message ?? null,
      finishReason: response.finishReason ?? null,
      usage: paid.usage,
      provider,
      model,
    }
    this.#parts!.journal.answer(key, JSON.stringify(body), paid.costMicros)
  }

  #key(idx: number, kind: 'call' | 'step', hash: Buffer): EntryKey {
    const { task } = this.#active
    const ts = this.#ctx.o.clock.now()
    return { fpId: task.fpId, idx, kind, hash, epoch: this.#epoch, taskId: task.id, ts }
  }

  #count(usage: Usage, micros: number | null): void {
    this.calls++
    addUsage(this.usage, usage)
    this.#cost = this.#cost === null || micros === null ? null : this.#cost + micros
  }

  #logLine(kind: 'log' | 'divergence' | 'lost' | 'step', message: string): void {
    const log = this.#log
    if (!log) return
    const { task } = this.#active
    this.#ctx.guard('task log', () => log.append(task.id, this.#ctx.o.clock.now(), kind, message))
  }
}
