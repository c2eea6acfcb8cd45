import { InlineError } from '../../components/inline-error'
import { formatInt } from '../../lib/format'
import { useStore } from '../../store'
import { canConfirmImport } from '../../store/import-slice'
import { AgentsField } from './agents-field'
import { BudgetField } from './budget-field'
import { ForecastTable } from './forecast-table'
import { ImportRouteChoice } from './import-route'

/** Per-line errors can number in the thousands; the first ones are what an operator fixes. */
const MAX_ERRORS_SHOWN = 1000

export function ImportPreview() {
  const draft = useStore((s) => s.importDraft)
  const setOptions = useStore((s) => s.setImportOptions)
  const confirm = useStore((s) => s.confirmImport)
  const close = useStore((s) => s.closeImport)
  if (!draft) return null

  const preview = draft.preview
  const errors = preview?.errors ?? []
  const canConfirm = canConfirmImport(draft)
  const busy = draft.phase === 'reading' || draft.phase === 'previewing'

  return (
    <section className="panel import-preview" data-testid="import-preview">
      <div className="panel-head">
        <h2>
          Import <span className="mono">{draft.fileName}</span>
          <span className="muted">
            {' '}
            {draft.format ?? 'unknown format'} · {formatBytes(draft.size)}
          </span>
        </h2>
        <button type="button" className="button ghost" onClick={close}>
          Discard
        </button>
      </div>

      <AgentsField key={`${draft.fileName}\n${draft.agents ?? ''}`} />
      <BudgetField key={`${draft.fileName}\n${draft.budgetUsd ?? ''}`} />
      {busy ? (
        <p className="hint">{draft.phase === 'reading' ? 'Reading file…' : 'Checking lines…'}</p>
      ) : null}
      <InlineError error={draft.error} testId="import-error" />

      {preview ? (
        <>
          <div className="import-summary">
            <span className="pill pill-good" data-testid="import-valid">
              {formatInt(preview.valid)} valid
            </span>
            <span
              className={`pill ${errors.length ? 'pill-bad' : ''}`}
              data-testid="import-error-count"
            >
              {formatInt(errors.length)} with errors
            </span>
          </div>

          {errors.length > 0 ? (
            <ol className="line-errors" data-testid="import-errors">
              {errors.slice(0, MAX_ERRORS_SHOWN).map((e, i) => (
                <li key={`${e.line}-${i}`} data-testid="import-error-item">
                  <span className="line-no">line {e.line}</span>
                  {e.field ? <code className="line-field">{e.field}</code> : null}
                  <span>{e.message}</span>
                </li>
              ))}
              {errors.length > MAX_ERRORS_SHOWN ? (
                <li className="muted">
                  …and {formatInt(errors.length - MAX_ERRORS_SHOWN)} more lines with errors
                </li>
              ) : null}
            </ol>
          ) : null}

          {preview.forecast ? <ForecastTable forecast={preview.forecast} /> : null}
          {preview.valid > 0 ? <ImportRouteChoice preview={preview} route={draft.route} /> : null}

          <div className="form-actions">
            {errors.length > 0 ? (
              <label className="check">
                <input
                  type="checkbox"
                  checked={draft.skipInvalid}
                  onChange={(e) => setOptions({ skipInvalid: e.target.checked })}
                  data-testid="import-skip-invalid"
                />
                Skip invalid lines
              </label>
            ) : null}
            <label
              className="check"
              title="Run without deduplication, but count and price every duplicate"
            >
              <input
                type="checkbox"
                checked={draft.audit}
                onChange={(e) => setOptions({ audit: e.target.checked })}
                data-testid="import-audit"
              />
              Audit mode (measure duplicates without deduplicating)
            </label>
            <span className="spacer" />
            <button
              type="button"
              className="button primary"
              disabled={!canConfirm || draft.phase === 'importing'}
              onClick={() => void confirm()}
              data-testid="import-confirm"
            >
              {draft.phase === 'importing'
                ? 'Queueing…'
                : `Queue ${formatInt(preview.valid)} task${preview.valid === 1 ? '' : 's'}${draft.route === 'batch' ? ' via Batch API' : ''}`}
            </button>
          </div>
          {errors.length > 0 && !draft.skipInvalid ? (
            <p className="hint">
              Fix the lines above, or check “Skip invalid lines” to queue only the valid ones.
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  )
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${(n / 1024 / 1024).toFixed(1)} MB`
}
