import { useState } from 'react'
import type { CommandError, SettingsView as Settings } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'

/** The longest deadline the engine takes: a day. */
const MAX_SECONDS = 86_400

/** How long one provider call may take before it is aborted (the callTimeoutSeconds setting). */
export function CallsSection({ settings }: { settings: Settings }) {
  const save = useStore((s) => s.saveSettings)
  const [seconds, setSeconds] = useState<string | null>(null)
  const [error, setError] = useState<CommandError | null>(null)
  const shown = seconds ?? String(settings.callTimeoutSeconds)

  const submit = async (): Promise<void> => {
    const n = Number(shown)
    if (!Number.isInteger(n) || n < 1 || n > MAX_SECONDS) {
      setError({
        code: 'invalid_input',
        field: 'callTimeoutSeconds',
        message: `Seconds must be a whole number from 1 to ${MAX_SECONDS}, got "${shown}"`,
      })
      return
    }
    setError(null)
    const reply = await save({ callTimeoutSeconds: n })
    if (reply.ok) setSeconds(null)
    else setError(reply.error)
  }

  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Calls</h2>
      </div>
      <div className="form-row">
        <label className="field">
          <span>Call timeout (seconds)</span>
          <input
            type="number"
            min={1}
            max={MAX_SECONDS}
            step={1}
            value={shown}
            onChange={(e) => setSeconds(e.target.value)}
            aria-invalid={error !== null}
            data-testid="call-timeout"
          />
        </label>
        <button
          type="button"
          className="button primary"
          disabled={seconds === null}
          onClick={() => void submit()}
          data-testid="save-call-timeout"
        >
          Save
        </button>
        <span className="hint">
          A call with no answer by then is aborted, recorded as a timeout and retried once.{' '}
          <code>pacer run --timeout</code> overrides it for one run.
        </span>
      </div>
      <InlineError error={error} />
    </section>
  )
}
