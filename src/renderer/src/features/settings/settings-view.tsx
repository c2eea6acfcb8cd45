import { useState } from 'react'
import {
  ProviderId,
  type CommandError,
  type SettingsView as Settings,
} from '../../../../shared/contract'
import { EmptyState } from '../../components/empty-state'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'
import { CallsSection } from './calls-section'
import { CachingSection } from './caching-section'
import { PricesSection } from './prices-section'
import { ProvidersSection } from './providers-section'
import { ObservabilitySection } from './observability-section'
import { TeamStoreSection } from './team-store-section'

export function SettingsView() {
  const settings = useStore((s) => s.settings)
  const error = useStore((s) => s.settingsError)
  const load = useStore((s) => s.loadSettings)
  if (!settings) {
    return (
      <div className="view">
        <EmptyState title={error ? 'Could not load settings' : 'Loading settings…'}>
          <InlineError error={error} />
          {error ? (
            <button type="button" className="button" onClick={() => void load()}>
              Try again
            </button>
          ) : null}
        </EmptyState>
      </div>
    )
  }
  return (
    <div className="view settings-view">
      <ProvidersSection settings={settings} />
      <DefaultsSection settings={settings} />
      <CallsSection settings={settings} />
      <DedupSection settings={settings} />
      <CachingSection settings={settings} />
      <TeamStoreSection settings={settings} />
      <ObservabilitySection settings={settings} />
      <PricesSection settings={settings} />
      <DatabaseSection settings={settings} />
    </div>
  )
}

function DefaultsSection({ settings }: { settings: Settings }) {
  const save = useStore((s) => s.saveSettings)
  const [provider, setProvider] = useState<ProviderId | null>(null)
  const [model, setModel] = useState<string | null>(null)
  const [error, setError] = useState<CommandError | null>(null)
  const [saved, setSaved] = useState(false)
  const dirty =
    (provider !== null && provider !== settings.defaultProvider) ||
    (model !== null && model !== settings.defaultModel)

  const submit = async (): Promise<void> => {
    setError(null)
    const reply = await save({
      ...(provider !== null ? { defaultProvider: provider } : {}),
      ...(model !== null ? { defaultModel: model.trim() } : {}),
    })
    if (!reply.ok) {
      setError(reply.error)
      return
    }
    setProvider(null)
    setModel(null)
    setSaved(true)
  }

  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Defaults</h2>
        <span className="hint">Used by tasks that name no provider or model.</span>
      </div>
      <div className="form-row">
        <label className="field">
          <span>Provider</span>
          <select
            value={provider ?? settings.defaultProvider}
            onChange={(e) => {
              setProvider(e.target.value as ProviderId)
              setSaved(false)
            }}
            data-testid="default-provider"
          >
            {ProviderId.options.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Model</span>
          <input
            value={model ?? settings.defaultModel}
            onChange={(e) => {
              setModel(e.target.value)
              setSaved(false)
            }}
            data-testid="default-model"
          />
        </label>
        <button
          type="button"
          className="button primary"
          disabled={!dirty}
          onClick={() => void submit()}
          data-testid="save-defaults"
        >
          Save
        </button>
        {saved ? <span className="hint-ok">Saved</span> : null}
      </div>
      <InlineError error={error} />
    </section>
  )
}

const HOUR_MS = 3_600_000

function DedupSection({ settings }: { settings: Settings }) {
  const save = useStore((s) => s.saveSettings)
  const [hours, setHours] = useState<string | null>(null)
  const [ttlError, setTtlError] = useState<CommandError | null>(null)
  const [auditError, setAuditError] = useState<CommandError | null>(null)
  const [auditBusy, setAuditBusy] = useState(false)
  const shownHours = hours ?? String(settings.resultTtlMs / HOUR_MS)

  const saveTtl = async (): Promise<void> => {
    const n = Number(shownHours)
    if (shownHours.trim() === '' || !Number.isFinite(n) || n < 0) {
      setTtlError({
        code: 'invalid_input',
        field: 'resultTtlMs',
        message: 'Hours must be 0 (keep forever) or a positive number',
      })
      return
    }
    setTtlError(null)
    const reply = await save({ resultTtlMs: Math.round(n * HOUR_MS) })
    if (reply.ok) setHours(null)
    else setTtlError(reply.error)
  }

  const toggle = async (patch: { audit: boolean } | { acceptTruncated: boolean }) => {
    setAuditBusy(true)
    setAuditError(null)
    const reply = await save(patch)
    setAuditBusy(false)
    if (!reply.ok) setAuditError(reply.error)
  }

  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Deduplication</h2>
      </div>
      <div className="form-row">
        <label className="field">
          <span>Reuse results for (hours)</span>
          <input
            type="number"
            min={0}
            step="any"
            value={shownHours}
            onChange={(e) => setHours(e.target.value)}
            aria-invalid={ttlError !== null}
            data-testid="retention-hours"
          />
        </label>
        <button
          type="button"
          className="button primary"
          disabled={hours === null}
          onClick={() => void saveTtl()}
          data-testid="save-retention"
        >
          Save
        </button>
        <span className="hint">
          0 = forever. A completed task’s result is reused by identical tasks for this long.
        </span>
      </div>
      <InlineError error={ttlError} />
      <label className="check toggle-row">
        <input
          type="checkbox"
          checked={settings.audit}
          disabled={auditBusy}
          onChange={(e) => void toggle({ audit: e.target.checked })}
          data-testid="audit-toggle"
        />
        <span>
          <strong>Audit mode</strong> — measure duplicates without deduplicating. Every task runs,
          and each duplicate call is counted and priced, so you can see what deduplication would
          save before turning it on.
        </span>
      </label>
      <label className="check toggle-row">
        <input
          type="checkbox"
          checked={settings.acceptTruncated}
          disabled={auditBusy}
          onChange={(e) => void toggle({ acceptTruncated: e.target.checked })}
          data-testid="accept-truncated-toggle"
        />
        <span>
          <strong>Reuse truncated answers</strong> — an answer the output cap cut short (finish
          reason <code>length</code>) is handed to its duplicates too. Off: each duplicate of a
          truncated answer runs again.
        </span>
      </label>
      <InlineError error={auditError} />
    </section>
  )
}

function DatabaseSection({ settings }: { settings: Settings }) {
  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Database</h2>
        <span className="hint">
          Shared by the desktop app and the <code>pacer</code> CLI.
        </span>
      </div>
      <label className="field">
        <span>Location</span>
        <input readOnly className="mono" value={settings.dbPath} data-testid="db-path" />
      </label>
      <p className="hint">Price table version {settings.priceTableVersion}</p>
    </section>
  )
}
