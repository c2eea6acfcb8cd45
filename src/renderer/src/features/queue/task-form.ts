/** The add-task form's rules, kept out of the component: what the fields turn into, and why not. */
import type { CommandError, ProviderId, TaskInput } from '../../../../shared/contract'
import { checkJson } from '../../lib/json-error'
import { findInexactNumber, parseExactJson } from '../../../../shared/exact-json'
import { findNonJson } from '../../../../shared/json-value'

export interface TaskForm {
  type: string
  payload: string
  steps: string
  model: string
  /** '' = the default provider from Settings. */
  provider: ProviderId | ''
  /** Request params as a JSON object ('{"max_tokens": 200}'); '' = none. */
  params: string
}

export type TaskField = keyof TaskForm

export const EMPTY_TASK_FORM: TaskForm = {
  type: '',
  payload: '{\n  "prompt": ""\n}',
  steps: '1',
  model: '',
  provider: '',
  params: '',
}

export type BuiltTask =
  { ok: true; task: TaskInput } | { ok: false; field: TaskField; message: string }

/**
 * The payload field's live check. Failing to parse gives a line and column; parsing into
 * something JSON cannot carry (`1e400` is Infinity, which would travel as null) gives its path
 * instead, worded as the engine words it.
 */
export type PayloadCheck =
  | { ok: true; value: unknown }
  | { ok: false; message: string; line: number; column: number }
  | { ok: false; message: string; line: null; column: null; path: string }

export function checkPayload(text: string): PayloadCheck {
  const parsed = checkJson(text)
  if (!parsed.ok) return parsed
  const bad = findNonJson(parsed.value, 'payload')
  if (bad) return { ok: false, message: bad.message, line: null, column: null, path: bad.path }
  const inexact = inexactNumber(text, 'payload')
  if (inexact)
    return { ok: false, message: inexact.message, line: null, column: null, path: inexact.path }
  return parsed
}

/**
 * A number the form would send rounded (9007199254740993 as ...992, 1e-400 as 0): the task would
 * not be the one written. A batch file keeps every digit, so the message points there.
 */
function inexactNumber(text: string, root: string): { path: string; message: string } | null {
  const found = findInexactNumber(parseExactJson(text), root)
  if (!found) return null
  const message = `${found.path} is ${found.digits}, which the console would send as ${Number(found.digits)}: import it from a batch file, which keeps every digit`
  return { path: found.path, message }
}

/** The check's failure as one sentence, with the position when there is one. */
function describePayloadError(check: Exclude<PayloadCheck, { ok: true }>): string {
  return check.line === null
    ? check.message
    : `${check.message} at line ${check.line}, column ${check.column}`
}

export function buildTaskInput(form: TaskForm): BuiltTask {
  const type = form.type.trim()
  if (!type) return { ok: false, field: 'type', message: 'Give the task a type, e.g. summarize' }
  const payload = checkPayload(form.payload)
  if (!payload.ok) return { ok: false, field: 'payload', message: describePayloadError(payload) }
  const steps = Number(form.steps)
  if (!Number.isInteger(steps) || steps < 1 || steps > 1000) {
    return { ok: false, field: 'steps', message: 'Steps must be a whole number from 1 to 1000' }
  }
  const task: TaskInput = { type, payload: payload.value as TaskInput['payload'], steps }
  if (form.model.trim()) task.model = form.model.trim()
  if (form.provider) task.provider = form.provider
  if (form.params.trim()) {
    const params = checkJson(form.params)
    const value = params.ok ? params.value : null
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      const message = params.ok ? 'must be a JSON object' : describePayloadError(params)
      return { ok: false, field: 'params', message: `Params: ${message}` }
    }
    const inexact = inexactNumber(form.params, 'params')
    if (inexact) return { ok: false, field: 'params', message: `Params: ${inexact.message}` }
    // The engine checks each param and names the bad one (tasks[0].params.temperature).
    task.params = value as TaskInput['params']
  }
  return { ok: true, task }
}

/** Which form field an engine error points at (`tasks[0].payload` → payload), if any. */
export function fieldOfError(error: CommandError): TaskField | null {
  const m = /^tasks\[\d+\]\.(\w+)/.exec(error.field ?? '')
  const name = m?.[1]
  return name === 'type' ||
    name === 'payload' ||
    name === 'steps' ||
    name === 'model' ||
    name === 'provider' ||
    name === 'params'
    ? name
    : null
}
