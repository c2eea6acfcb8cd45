/** The add-task form's rules, kept out of the component: what the fields turn into, and why not. */
import type { CommandError, ProviderId, TaskInput } from '../../../../shared/contract'
import { checkJson, type JsonCheck } from '../../lib/json-error'

export interface TaskForm {
  type: string
  payload: string
  steps: string
  model: string
  /** '' = the default provider from Settings. */
  provider: ProviderId | ''
}

export type TaskField = keyof TaskForm

export const EMPTY_TASK_FORM: TaskForm = {
  type: '',
  payload: '{\n  "prompt": ""\n}',
  steps: '1',
  model: '',
  provider: '',
}

export type BuiltTask =
  { ok: true; task: TaskInput } | { ok: false; field: TaskField; message: string }

export function checkPayload(text: string): JsonCheck {
  return checkJson(text)
}

export function buildTaskInput(form: TaskForm): BuiltTask {
  const type = form.type.trim()
  if (!type) return { ok: false, field: 'type', message: 'Give the task a type, e.g. summarize' }
  const payload = checkJson(form.payload)
  if (!payload.ok) {
    return {
      ok: false,
      field: 'payload',
      message: `${payload.message} at line ${payload.line}, column ${payload.column}`,
    }
  }
  const steps = Number(form.steps)
  if (!Number.isInteger(steps) || steps < 1 || steps > 1000) {
    return { ok: false, field: 'steps', message: 'Steps must be a whole number from 1 to 1000' }
  }
  const task: TaskInput = { type, payload: payload.value as TaskInput['payload'], steps }
  if (form.model.trim()) task.model = form.model.trim()
  if (form.provider) task.provider = form.provider
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
    name === 'provider'
    ? name
    : null
}
