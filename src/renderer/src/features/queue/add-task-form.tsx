import { useState, type FormEvent } from 'react'
import { ProviderId, type CommandError } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'
import {
  buildTaskInput,
  checkPayload,
  EMPTY_TASK_FORM,
  fieldOfError,
  type TaskField,
  type TaskForm,
} from './task-form'

export function AddTaskForm({ onClose }: { onClose: () => void }) {
  const enqueueTask = useStore((s) => s.enqueueTask)
  const defaults = useStore((s) => s.settings)
  const [form, setForm] = useState<TaskForm>(EMPTY_TASK_FORM)
  const [error, setError] = useState<{ field: TaskField | null; error: CommandError } | null>(null)
  const [busy, setBusy] = useState(false)
  const [queued, setQueued] = useState<string | null>(null)

  const json = checkPayload(form.payload)
  const update = (patch: Partial<TaskForm>): void => {
    setForm((f) => ({ ...f, ...patch }))
    setQueued(null)
    if (error && error.field && error.field in patch) setError(null)
  }

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const built = buildTaskInput(form)
    if (!built.ok) {
      setError({ field: built.field, error: { code: 'invalid_input', message: built.message } })
      return
    }
    setBusy(true)
    setError(null)
    const reply = await enqueueTask(built.task)
    setBusy(false)
    if (!reply.ok) {
      setError({ field: fieldOfError(reply.error), error: reply.error })
      return
    }
    setQueued(`Queued as batch ${reply.value.batchId}`)
  }

  const fieldError = (field: TaskField) =>
    error?.field === field ? <InlineError error={error.error} /> : null

  return (
    <form className="panel add-task" onSubmit={submit} data-testid="add-task-form">
      <div className="panel-head">
        <h2>Add a task</h2>
        <button type="button" className="button ghost" onClick={onClose}>
          Close
        </button>
      </div>
      <div className="form-grid">
        <label className="field">
          <span>Type</span>
          <input
            value={form.type}
            placeholder="summarize"
            onChange={(e) => update({ type: e.target.value })}
            data-testid="task-type"
            aria-invalid={error?.field === 'type'}
          />
          {fieldError('type')}
        </label>
        <label className="field">
          <span>Steps</span>
          <input
            type="number"
            min={1}
            max={1000}
            value={form.steps}
            onChange={(e) => update({ steps: e.target.value })}
            data-testid="task-steps"
            aria-invalid={error?.field === 'steps'}
          />
          {fieldError('steps')}
        </label>
        <label className="field">
          <span>Provider</span>
          <select
            value={form.provider}
            onChange={(e) => update({ provider: e.target.value as TaskForm['provider'] })}
            data-testid="task-provider"
          >
            <option value="">Default ({defaults?.defaultProvider ?? 'sim'})</option>
            {ProviderId.options.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
          {fieldError('provider')}
        </label>
        <label className="field">
          <span>Model</span>
          <input
            value={form.model}
            placeholder={defaults?.defaultModel ?? 'default model'}
            onChange={(e) => update({ model: e.target.value })}
            data-testid="task-model"
          />
          {fieldError('model')}
        </label>
        <label className="field field-wide">
          <span>Params (JSON, optional)</span>
          <input
            className="code"
            value={form.params}
            placeholder='{"max_tokens": 200, "temperature": 0}'
            onChange={(e) => update({ params: e.target.value })}
            data-testid="task-params"
            aria-invalid={error?.field === 'params'}
          />
          {fieldError('params')}
        </label>
        <label className="field field-wide">
          <span>
            Payload (JSON)
            {json.ok ? (
              <em className="hint-ok"> valid</em>
            ) : (
              <em className="hint-bad" data-testid="payload-json-error">
                {' '}
                {json.line === null
                  ? json.message
                  : `${json.message} — line ${json.line}, column ${json.column}`}
              </em>
            )}
          </span>
          <textarea
            className="code"
            rows={6}
            spellCheck={false}
            value={form.payload}
            onChange={(e) => update({ payload: e.target.value })}
            aria-invalid={!json.ok}
            data-testid="task-payload"
          />
          {fieldError('payload')}
        </label>
      </div>
      <div className="form-actions">
        <button
          type="submit"
          className="button primary"
          disabled={busy || !json.ok}
          data-testid="task-submit"
        >
          {busy ? 'Queueing…' : 'Queue task'}
        </button>
        {error && error.field === null ? <InlineError error={error.error} /> : null}
        {queued ? <span className="hint-ok">{queued}</span> : null}
      </div>
    </form>
  )
}
