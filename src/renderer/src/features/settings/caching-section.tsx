import { useState } from 'react'
import type { CommandError, SettingsView } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'

/** Anthropic prompt caching on or off (the `promptCaching` setting). */
export function CachingSection({ settings }: { settings: SettingsView }) {
  const save = useStore((s) => s.saveSettings)
  const [error, setError] = useState<CommandError | null>(null)
  const [busy, setBusy] = useState(false)

  const toggle = async (promptCaching: boolean): Promise<void> => {
    setBusy(true)
    setError(null)
    const reply = await save({ promptCaching })
    setBusy(false)
    if (!reply.ok) setError(reply.error)
  }

  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Prompt caching</h2>
      </div>
      <label className="check toggle-row">
        <input
          type="checkbox"
          checked={settings.promptCaching}
          disabled={busy}
          onChange={(e) => void toggle(e.target.checked)}
          data-testid="prompt-caching-toggle"
        />
        <span>
          <strong>Anthropic prompt caching</strong> — mark the system prompt and a multi-step task’s
          resent history for Anthropic’s cache. Reads cost a tenth of the input price, writes 1.25×;
          the Spend view shows what it saved. OpenAI caches long prompts by itself.
        </span>
      </label>
      <InlineError error={error} />
    </section>
  )
}
