import { useState } from 'react'
import { ControllerKind, type CommandError } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'

const LABELS: Record<ControllerKind, string> = {
  adaptive: 'adaptive (default)',
  seed: 'seed AIMD',
}

/**
 * Which concurrency controller the scheduler runs. A change is saved as the `controller` setting
 * and swaps every running partition's controller at its current limit.
 */
export function ControllerPicker() {
  const settings = useStore((s) => s.settings)
  const save = useStore((s) => s.saveSettings)
  const loadScheduler = useStore((s) => s.loadScheduler)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<CommandError | null>(null)

  const choose = async (controller: ControllerKind): Promise<void> => {
    setBusy(true)
    setError(null)
    const reply = await save({ controller })
    setBusy(false)
    if (!reply.ok) setError(reply.error)
    // The swap is a change of every partition: show it without waiting for the next event.
    else void loadScheduler()
  }

  return (
    <div className="controller-picker">
      <label className="field inline">
        <span>Controller</span>
        <select
          value={settings?.controller ?? ''}
          disabled={!settings || busy}
          onChange={(e) => void choose(e.target.value as ControllerKind)}
          data-testid="controller-select"
        >
          {settings ? null : <option value="">…</option>}
          {ControllerKind.options.map((kind) => (
            <option key={kind} value={kind}>
              {LABELS[kind]}
            </option>
          ))}
        </select>
      </label>
      <InlineError error={error} testId="controller-error" />
    </div>
  )
}
