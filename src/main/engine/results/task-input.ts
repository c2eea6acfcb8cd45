// What a task was asked, as the console's task drawer shows it: its payload, request params, the
// messages its first call sends, its provider and model, and the agent module that runs it. The
// renderer is no place for a credential: a field named like one, a configured API key and the
// shapes vendors give their keys are replaced by [redacted] before anything leaves the engine.
import { isLosslessNumber, parseExactJson, stringifyExact } from '../../../shared/exact-json'
import type { TaskInputView, TaskJournalEntryView } from '../../../shared/contract'
import type { BatchAgents } from '../agents/registry'
import type { JsonValue } from '../core/types'
import { taskMessages } from '../providers/prompt'
import { EFFECT_KINDS, ENTRY_STATES } from '../runner/durable/journal'

export const REDACTED = '[redacted]'

/** Field names that hold credentials (not `max_tokens`: a token count is no secret). */
const SECRET_FIELD =
  /^(?:x-)?(?:.*[-_])?(?:api[-_]?key|apikey|authorization|password|passwd|secret|client[-_]?secret|(?:access|refresh|auth|bearer|session|id)[-_]?token|token|private[-_]?key|cookie)$/i
/** Vendors' key shapes: OpenAI / Anthropic `sk-...`, a bearer header's value. */
const KEY_SHAPES = [/\bsk-[A-Za-z0-9_-]{16,}/g, /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/g]

/** Redacts credentials from strings and objects; `secrets`: the configured keys' values. */
export class Redactor {
  readonly #secrets: string[]

  constructor(secrets: readonly (string | null)[]) {
    // A key of a few characters would redact ordinary words: keys are long.
    this.#secrets = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8)
  }

  text(s: string): string {
    let out = s
    for (const secret of this.#secrets) out = out.split(secret).join(REDACTED)
    for (const shape of KEY_SHAPES) out = out.replace(shape, REDACTED)
    return out
  }

  value(v: unknown, depth = 0): unknown {
    if (typeof v === 'string') return this.text(v)
    if (v === null || typeof v !== 'object' || isLosslessNumber(v) || depth > 300) return v
    if (Array.isArray(v)) return v.map((x) => this.value(x, depth + 1))
    const out: Record<string, unknown> = {}
    for (const [key, x] of Object.entries(v)) {
      out[key] = SECRET_FIELD.test(key) && x !== null ? REDACTED : this.value(x, depth + 1)
    }
    return out
  }

  /** Stored JSON text, redacted and indented for reading (numbers as written). */
  json(text: string | null): string | null {
    if (text === null) return null
    try {
      return indentJson(stringifyExact(this.value(parseExactJson(text))))
    } catch {
      return this.text(text)
    }
  }
}

/** The execution's row a task's input is read from (payload and params as stored JSON). */
export type TaskInputRow = Pick<
  TaskInputView,
  'type' | 'payload' | 'params' | 'steps' | 'provider' | 'model'
> & { agents: string | null }

/** The task's input; the messages only for the built-in loop (an agent module builds its own). */
export function taskInput(row: TaskInputRow, redactor: Redactor): TaskInputView {
  const agents = row.agents ? (JSON.parse(row.agents) as BatchAgents) : null
  const agent =
    agents && agents.types.includes(row.type)
      ? { path: agents.path, identity: agents.identity, code: agents.code }
      : null
  let messages: TaskInputView['messages'] = null
  if (!agent && row.payload !== null) {
    try {
      messages = taskMessages(row.type, parseExactJson(row.payload) as JsonValue).map((m) => {
        const content = m.content
        const fields = m.fields ? redactor.value(m.fields) : null
        return {
          role: m.role,
          content:
            content === null
              ? null
              : typeof content === 'string'
                ? redactor.text(content)
                : indentJson(stringifyExact(redactor.value(content))),
          fields: fields === null ? null : indentJson(stringifyExact(fields)),
        }
      })
    } catch {
      messages = null
    }
  }
  return {
    type: row.type,
    payload: redactor.json(row.payload),
    params: redactor.json(row.params),
    steps: row.steps,
    provider: row.provider,
    model: row.model,
    messages,
    agent,
  }
}

/** A journal row as stored (runner/durable/journal.ts). */
export interface JournalDbRow {
  idx: number
  kind: number
  state: number
  ts: number
  body: string | null
  cost_micros: number | null
}

/** One journal entry for the drawer: a call's answer text, a step's value as JSON. */
export function journalEntry(row: JournalDbRow, redactor: Redactor): TaskJournalEntryView {
  const kind = row.kind === EFFECT_KINDS.step ? 'step' : 'call'
  let text: string | null = null
  let model: string | null = null
  if (row.body !== null) {
    if (kind === 'call') {
      try {
        const answer = JSON.parse(row.body) as { text?: unknown; model?: unknown }
        text = typeof answer.text === 'string' ? redactor.text(answer.text) : null
        model = typeof answer.model === 'string' ? answer.model : null
      } catch {
        text = null
      }
    } else {
      text = redactor.json(row.body)
    }
  }
  return {
    idx: row.idx,
    kind,
    state: row.state === ENTRY_STATES.answered ? 'answered' : 'sent',
    ts: row.ts,
    model,
    costMicros: row.cost_micros,
    text,
  }
}

/**
 * JSON text re-indented by two spaces, its tokens untouched (so a number keeps its digits): a
 * payload is read in the drawer, not parsed again.
 */
export function indentJson(text: string): string {
  let out = ''
  let depth = 0
  let inString = false
  const pad = (): string => `\n${'  '.repeat(depth)}`
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (inString) {
      out += ch
      if (ch === '\\') out += text[++i] ?? ''
      else if (ch === '"') inString = false
      continue
    }
    if (ch === '"') {
      inString = true
      out += ch
    } else if (ch === '{' || ch === '[') {
      const close = ch === '{' ? '}' : ']'
      if (text[i + 1] === close) {
        out += ch + close
        i++
        continue
      }
      depth++
      out += ch + pad()
    } else if (ch === '}' || ch === ']') {
      depth--
      out += pad() + ch
    } else if (ch === ',') {
      out += `,${pad()}`
    } else if (ch === ':') {
      out += ': '
    } else if (ch !== ' ' && ch !== '\n' && ch !== '\t' && ch !== '\r') {
      out += ch
    }
  }
  return out
}
