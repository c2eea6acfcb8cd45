import { useState } from 'react'
import type {
  CommandError,
  ProviderId,
  ProviderSettingsView,
  SettingsView,
} from '../../../../shared/contract'
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
          back to this window. A key is stored for the base URL in effect when you save it: change
          the URL afterwards and the key no longer goes there (save it again for the new URL).
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
          {current?.hasKey && current.keyFrom !== 'environment' ? (
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
            {current?.hasKey
              ? `${current.keyFrom === 'environment' ? 'from the environment' : 'stored'}${hint ? ` (…${hint})` : ''}`
              : 'no key'}
          </span>
        </form>
        <InlineError error={keyError} />
        {current ? <KeyRoute provider={provider} view={current} /> : null}
      </div>
    </div>
  )
}

const FROM: Record<NonNullable<ProviderSettingsView['baseUrlFrom']>, string> = {
  process: 'given to this process with --base-url or a *_BASE_URL variable',
  settings: 'the base URL above',
  default: 'the provider’s default',
}

/** Where this provider's calls go, where its key goes, and why the key is held back if it is. */
function KeyRoute({ provider, view }: { provider: ProviderId; view: ProviderSettingsView }) {
  if (view.effectiveBaseUrl === null) return null
  return (
    <>
      <p className="hint key-route" data-testid={`key-route-${provider}`}>
        Calls go to <code>{view.effectiveBaseUrl}</code>
        {view.baseUrlFrom ? ` (${FROM[view.baseUrlFrom]})` : ''}.
        {view.keyFrom === 'store' && view.keyBaseUrl ? (
          <>
            {' '}
            The stored key goes only to <code>{view.keyBaseUrl}</code>.
          </>
        ) : null}
        {view.keyFrom === 'environment'
          ? ' The key from the environment goes only to the provider’s default server or a base URL given with it.'
          : null}
      </p>
      {view.keyRefusal ? (
        <p className="hint-bad key-route" role="alert" data-testid={`key-refusal-${provider}`}>
          {view.keyRefusal}
        </p>
      ) : null}
    </>
  )
}
