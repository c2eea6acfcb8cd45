import { useState } from 'react'
import type { CommandError, ProviderId, SettingsView } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'

/** sim is built in: no endpoint, no key. */
const CONFIGURABLE: readonly ProviderId[] = ['openai', 'anthropic', 'openai-compatible']

export function ProvidersSection({ settings }: { settings: SettingsView }) {
  const storage = settings.secretStorage
  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Providers</h2>
        <span className="hint">
          <code>sim</code> is built in and needs no key. Keys go to the engine and are never sent
          back to this window.
        </span>
      </div>
      {!storage.available ? (
        <div className="banner banner-warn" data-testid="secret-storage-unavailable">
          API keys cannot be stored here{storage.reason ? `: ${storage.reason}` : '.'}
        </div>
      ) : null}
      <div className="provider-grid">
        {CONFIGURABLE.map((p) => (
          <ProviderRow key={p} provider={p} settings={settings} />
        ))}
      </div>
    </section>
  )
}

function ProviderRow({ provider, settings }: { provider: ProviderId; settings: SettingsView }) {
  const saveSettings = useStore((s) => s.saveSettings)
  const saveSecret = useStore((s) => s.saveSecret)
  const current = settings.providers[provider]
  const canStore = settings.secretStorage.available
  const [url, setUrl] = useState<string | null>(null)
  const [key, setKey] = useState('')
  const [urlError, setUrlError] = useState<CommandError | null>(null)
  const [keyError, setKeyError] = useState<CommandError | null>(null)
  const [busy, setBusy] = useState(false)

  const saveUrl = async (): Promise<void> => {
    setUrlError(null)
    const value = (url ?? '').trim()
    const reply = await saveSettings({ baseUrls: { [provider]: value === '' ? null : value } })
    if (reply.ok) setUrl(null)
    else setUrlError(reply.error)
  }

  const storeKey = async (apiKey: string | null): Promise<void> => {
    setBusy(true)
    setKeyError(null)
    const reply = await saveSecret(provider, apiKey)
    setBusy(false)
    if (reply.ok) setKey('')
    else setKeyError(reply.error)
  }

  const hint = current?.keyHint?.replace(/^[….]+/, '')
  return (
    <div className="provider-row" data-testid={`provider-${provider}`}>
      <div className="provider-name mono">{provider}</div>
      <div className="provider-fields">
        <div className="form-row">
          <label className="field grow">
            <span>Base URL</span>
            <input
              type="url"
              value={url ?? current?.baseUrl ?? ''}
              placeholder="provider default"
              onChange={(e) => setUrl(e.target.value)}
              aria-invalid={urlError !== null}
              data-testid={`base-url-${provider}`}
            />
          </label>
          <button
            type="button"
            className="button"
            disabled={url === null}
            onClick={() => void saveUrl()}
          >
            Save URL
          </button>
        </div>
        <InlineError error={urlError} />
        <form
          className="form-row"
          onSubmit={(e) => {
            e.preventDefault()
            if (key.trim()) void storeKey(key.trim())
          }}
        >
          <label className="field grow">
            <span>API key</span>
            <input
              type="password"
              autoComplete="off"
              value={key}
              placeholder={current?.hasKey ? 'replace the stored key' : 'paste a key'}
              disabled={!canStore || busy}
              onChange={(e) => setKey(e.target.value)}
              data-testid={`api-key-${provider}`}
            />
          </label>
          <button type="submit" className="button" disabled={!canStore || busy || !key.trim()}>
            Save key
          </button>
          {current?.hasKey ? (
            <button
              type="button"
              className="button ghost"
              disabled={busy}
              onClick={() => void storeKey(null)}
            >
              Remove
            </button>
          ) : null}
          <span
            className={current?.hasKey ? 'key-state stored' : 'key-state'}
            data-testid={`key-state-${provider}`}
          >
            {current?.hasKey ? `stored${hint ? ` (…${hint})` : ''}` : 'no key'}
          </span>
        </form>
        <InlineError error={keyError} />
      </div>
    </div>
  )
}
