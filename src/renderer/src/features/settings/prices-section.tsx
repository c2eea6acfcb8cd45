import { useState } from 'react'
import type { CommandError, SettingsView } from '../../../../shared/contract'
import { InlineError } from '../../components/inline-error'
import { useStore } from '../../store'
import {
  emptyPriceRow,
  PRICE_FIELDS,
  PRICE_LABELS,
  rowsFromOverrides,
  validatePriceRows,
  type PriceRow,
  type PriceRowErrors,
} from './price-rows'

export function PricesSection({ settings }: { settings: SettingsView }) {
  const save = useStore((s) => s.saveSettings)
  // null = show what the engine has; a draft exists only while editing.
  const [draft, setDraft] = useState<PriceRow[] | null>(null)
  const [rowErrors, setRowErrors] = useState<Map<number, PriceRowErrors>>(new Map())
  const [error, setError] = useState<CommandError | null>(null)
  const rows = draft ?? rowsFromOverrides(settings.priceOverrides)

  const edit = (next: PriceRow[]): void => {
    setDraft(next)
    setError(null)
  }
  const update = (key: number, patch: (r: PriceRow) => PriceRow): void =>
    edit(rows.map((r) => (r.key === key ? patch(r) : r)))

  const submit = async (): Promise<void> => {
    const { errors, overrides } = validatePriceRows(rows)
    setRowErrors(errors)
    if (!overrides) return
    const reply = await save({ priceOverrides: overrides })
    if (reply.ok) setDraft(null)
    else setError(reply.error)
  }

  return (
    <section className="panel settings-section">
      <div className="panel-head">
        <h2>Price overrides</h2>
        <span className="hint">
          USD per 1M tokens. Overrides win over the bundled table (version{' '}
          {settings.priceTableVersion}); a model with no price is shown as unpriced, never $0.
        </span>
      </div>
      {rows.length ? (
        <table className="data-table price-table" data-testid="price-overrides">
          <thead>
            <tr>
              <th>Model</th>
              {PRICE_FIELDS.map((f) => (
                <th key={f} className="num">
                  {PRICE_LABELS[f]}
                </th>
              ))}
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const e = rowErrors.get(row.key) ?? {}
              return (
                <tr key={row.key}>
                  <td>
                    <input
                      value={row.model}
                      placeholder="model id"
                      aria-invalid={Boolean(e.model)}
                      title={e.model}
                      onChange={(ev) => update(row.key, (r) => ({ ...r, model: ev.target.value }))}
                    />
                    {e.model ? <div className="cell-error">{e.model}</div> : null}
                  </td>
                  {PRICE_FIELDS.map((f) => (
                    <td key={f} className="num">
                      <input
                        inputMode="decimal"
                        className="num"
                        value={row.prices[f]}
                        placeholder={f === 'input' || f === 'output' ? '0.00' : '0'}
                        aria-invalid={Boolean(e[f])}
                        title={e[f]}
                        onChange={(ev) =>
                          update(row.key, (r) => ({
                            ...r,
                            prices: { ...r.prices, [f]: ev.target.value },
                          }))
                        }
                      />
                      {e[f] ? <div className="cell-error">{e[f]}</div> : null}
                    </td>
                  ))}
                  <td>
                    <button
                      type="button"
                      className="button small ghost"
                      onClick={() => edit(rows.filter((r) => r.key !== row.key))}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      ) : (
        <p className="hint">No overrides: the bundled price table applies.</p>
      )}
      <div className="form-actions">
        <button
          type="button"
          className="button"
          onClick={() =>
            edit([...rows, emptyPriceRow(Math.max(-1, ...rows.map((r) => r.key)) + 1)])
          }
          data-testid="add-price"
        >
          Add model
        </button>
        <button
          type="button"
          className="button primary"
          disabled={draft === null}
          onClick={() => void submit()}
          data-testid="save-prices"
        >
          Save prices
        </button>
        {draft !== null ? (
          <button
            type="button"
            className="button ghost"
            onClick={() => {
              setDraft(null)
              setRowErrors(new Map())
              setError(null)
            }}
          >
            Discard changes
          </button>
        ) : null}
      </div>
      <InlineError error={error} />
    </section>
  )
}
