import { useState } from 'react'
import type { CommandError, SettingsView as Settings } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'

/**
 * Settings → Observability: where the spans of the batches this console runs go (OpenTelemetry,
 * OTLP/HTTP). Headers are credentials: they go to the engine and never come back — this view only
 * ever learns their names.
 */
export function ObservabilitySection({ settings }: { settings: Settings }) {
  const save = useStore((s) => s.saveSettings)
  const saveHeaders = useStore((s) => s.saveOtlpHeaders)
  const testOtlp = useStore((s) => s.testOtlp)
  const o = settings.observability
  const [endpoint, setEndpoint] = useState<string | null>(null)
  const [headers, setHeaders] = useState('')
  const [error, setError] = useState<CommandError | null>(null)
  const [testing, setTesting] = useState(false)
  const [test, setTest] = useState<{ ok: boolean; message: string } | null>(null)
  const shown = endpoint ?? o.endpoint ?? ''

  const submitEndpoint = async (value: string | null): Promise<void> => {
    setError(null)
    setTest(null)
    const reply = await save({ otlpEndpoint: value })
    if (reply.ok) setEndpoint(null)
    else setError(reply.error)
  }

  const submitHeaders = async (value: string | null): Promise<void> => {
    setError(null)
    setTest(null)
    const reply = await saveHeaders(value)
    // Cleared either way: the field never holds a secret longer than it takes to send it.
    setHeaders('')
    if (!reply.ok) setError(reply.error)
  }

  const runTest = async (): Promise<void> => {
    setError(null)
    setTest(null)
    setTesting(true)
    const reply = await testOtlp()
    setTesting(false)
    if (reply.ok) setTest(reply.value)
    else setError(reply.error)
  }

  return (
    <section className="panel settings-section" data-testid="observability">
      <div className="panel-head">
        <h2>Observability</h2>
        <span className="hint">
          OpenTelemetry traces of each batch (GenAI conventions) to Langfuse, Phoenix, Tempo or any
          OTLP/HTTP collector.
        </span>
      </div>
      <p className="hint" data-testid="otlp-effective">
        {o.effectiveUrl
          ? `Spans of the batches this console runs go to ${o.effectiveUrl}${
              o.from === 'process'
                ? ' (given to this process with --otlp or OTEL_EXPORTER_OTLP_*; it wins over the endpoint below)'
                : ''
            }.`
          : 'No export: the batches this console runs send no spans.'}
        {o.headerNames.length
          ? ` Headers sent: ${o.headerNames.map((n) => `${n}=***`).join(', ')} (${
              o.headersFrom === 'environment' ? 'from the environment' : 'stored, encrypted'
            }).`
          : ''}
      </p>
      {o.problem ? (
        <p className="stopped-banner" role="status" data-testid="otlp-problem">
          <strong>Observability:</strong> {o.problem}
        </p>
      ) : null}
      <div className="form-row">
        <label className="field">
          <span>OTLP endpoint</span>
          <input
            type="text"
            placeholder="https://cloud.langfuse.com/api/public/otel"
            spellCheck={false}
            value={shown}
            onChange={(e) => setEndpoint(e.target.value)}
            aria-invalid={error?.field === 'otlpEndpoint'}
            data-testid="otlp-endpoint"
          />
        </label>
        <button
          type="button"
          className="button primary"
          disabled={endpoint === null}
          onClick={() => void submitEndpoint(shown.trim() === '' ? null : shown.trim())}
          data-testid="save-otlp-endpoint"
        >
          Save
        </button>
        {o.endpoint ? (
          <button type="button" className="button" onClick={() => void submitEndpoint(null)}>
            Turn off
          </button>
        ) : null}
        <span className="hint">/v1/traces is added. Used from the next batch on.</span>
      </div>
      <div className="form-row">
        <label className="field">
          <span>Headers</span>
          <input
            type="password"
            autoComplete="off"
            placeholder={
              o.headersFrom === 'store'
                ? 'stored (enter again to replace)'
                : 'Authorization=Basic …'
            }
            spellCheck={false}
            value={headers}
            disabled={o.headersStorage !== null}
            onChange={(e) => setHeaders(e.target.value)}
            aria-invalid={error?.field === 'headers'}
            data-testid="otlp-headers"
          />
        </label>
        <button
          type="button"
          className="button primary"
          disabled={headers.trim() === '' || o.headersStorage !== null}
          onClick={() => void submitHeaders(headers)}
          data-testid="save-otlp-headers"
        >
          Save headers
        </button>
        {o.headersEndpoint ? (
          <button type="button" className="button" onClick={() => void submitHeaders(null)}>
            Remove headers
          </button>
        ) : null}
        <button
          type="button"
          className="button"
          disabled={testing}
          onClick={() => void runTest()}
          data-testid="test-otlp"
        >
          {testing ? 'Testing…' : 'Test'}
        </button>
      </div>
      <p className="hint" data-testid="otlp-headers-storage">
        {o.headersStorage ??
          (o.headersEndpoint
            ? `Headers stored for ${o.headersEndpoint} (encrypted with the OS keyring; sent there only).`
            : 'key=value pairs, comma-separated (as OTEL_EXPORTER_OTLP_HEADERS); encrypted with the OS keyring, sent to this endpoint only.')}
      </p>
      {test ? (
        <p
          className={test.ok ? 'hint-ok' : 'stopped-banner'}
          role="status"
          data-testid="otlp-test-result"
        >
          {test.ok ? 'Test span accepted: ' : 'Test failed: '}
          {test.message}
        </p>
      ) : null}
      <InlineError error={error} />
    </section>
  )
}
