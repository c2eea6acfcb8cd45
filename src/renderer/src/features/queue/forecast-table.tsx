import { useState } from 'react'
import type { ForecastTypeView, ForecastView } from '../../../../shared/contract'
import { formatUsd, formatUsdPerM } from '../../../../shared/format'
import { capForecastLine } from '../../../../shared/cap-forecast-text'
import { formatInt, formatTokens } from '../../lib/format'
import { useStore } from '../../store'

/** What the batch will cost before it runs, per task type, and what dedup takes off it. */
export function ForecastTable({ forecast }: { forecast: ForecastView }) {
  return (
    <div className="table-scroll">
      <table className="data-table" data-testid="import-forecast">
        <thead>
          <tr>
            <th>Task type</th>
            <th className="num">Tasks</th>
            <th className="num">Duplicates</th>
            <th className="num" title="Tasks whose answer this database already holds: no call, $0">
              Reused
            </th>
            <th className="num">Calls</th>
            <th className="num">Input tokens</th>
            <th className="num">Output tokens</th>
            <th className="num">Cost</th>
            <th className="num">Dedup saves</th>
          </tr>
        </thead>
        <tbody>
          {forecast.byType.map((t) => (
            <ForecastRow key={t.taskType} row={t} />
          ))}
        </tbody>
        <tfoot>
          <ForecastRow row={forecast.total} label="Total" />
        </tfoot>
      </table>
      <ForecastNotes forecast={forecast} />
    </div>
  )
}

function ForecastRow({ row, label }: { row: ForecastTypeView; label?: string }) {
  return (
    <tr>
      <td>{label ?? row.taskType}</td>
      <td className="num">{formatInt(row.tasks)}</td>
      <td className="num">
        {formatInt(row.duplicates)}
        <span className="muted"> ({formatInt(row.distinctTasks)} distinct)</span>
      </td>
      <td className="num">{formatInt(row.reused)}</td>
      <td className="num">{formatInt(row.calls)}</td>
      <td className="num">{formatTokens(row.inputTokens)}</td>
      <td className="num">{formatTokens(row.outputTokens)}</td>
      <td className="num">{formatUsd(row.costMicros)}</td>
      <td className="num good">{formatUsd(row.savedByDedupMicros)}</td>
    </tr>
  )
}

/** What the forecast reused, assumed and priced against, under its table. */
function ForecastNotes({ forecast }: { forecast: ForecastView }) {
  const { total, models } = forecast
  return (
    <div className="forecast-notes" data-testid="import-forecast-notes">
      {total.reused > 0 ? (
        <p className="hint" data-testid="import-forecast-reused">
          {formatInt(total.reused)} task(s) reuse an answer this database already holds: no call,
          $0.
        </p>
      ) : null}
      <OutputTokensField assumed={forecast.assumedOutputTokens} />
      <p className="hint" data-testid="import-forecast-models">
        Priced against{' '}
        {models.map((m, i) => (
          <span key={`${m.provider}/${m.model}`}>
            {i > 0 ? '; ' : ''}
            <span className="mono">
              {m.provider}/{m.model}
            </span>{' '}
            ({formatInt(m.tasks)} task{m.tasks === 1 ? '' : 's'}):{' '}
            {m.price
              ? `${formatUsdPerM(m.price.input)} input, ${formatUsdPerM(m.price.output)} output per 1M tokens`
              : 'no price, not included'}
          </span>
        ))}{' '}
        <span className="muted">(price table {forecast.priceVersion})</span>.
      </p>
      {forecast.unpricedTasks > 0 ? (
        <p className="hint">
          {formatInt(forecast.unpricedTasks)} task(s) use a model without a price: their cost is
          unknown, not zero. Add a price in Settings.
        </p>
      ) : null}
      {forecast.caps.map((c) => (
        <p
          key={c.capId ?? 'run'}
          className={
            c.hitAt !== null || c.minimumPasses || c.unpricedTasks > 0 ? 'hint hint-bad' : 'hint'
          }
          data-testid={`import-forecast-cap-${c.capId ?? 'run'}`}
        >
          {capForecastLine(c, total.tasks)}
        </p>
      ))}
    </div>
  )
}

/**
 * The output tokens each step is assumed to answer: empty is the engine's rule (the simulated
 * answer on sim, the prompt's size elsewhere). Applied on Enter or leaving the field, not per key:
 * every change forecasts the whole file again.
 */
function OutputTokensField({ assumed }: { assumed: number | null }) {
  const setOptions = useStore((s) => s.setImportOptions)
  const [text, setText] = useState(assumed === null ? '' : String(assumed))
  const valid = /^\d{0,7}$/.test(text.trim())
  const apply = () => {
    if (!valid) return
    const t = text.trim()
    setOptions({ assumeOutputTokens: t === '' ? null : Number(t) })
  }
  return (
    <label className="field inline" data-testid="import-output-tokens">
      <span>
        Output tokens per step:{' '}
        {assumed === null
          ? 'assumed the size of the simulated answer on sim, of the prompt on other providers'
          : `assumed ${formatInt(assumed)}`}
      </span>
      <input
        inputMode="numeric"
        value={text}
        placeholder="default"
        aria-invalid={!valid}
        onChange={(e) => setText(e.target.value)}
        onBlur={apply}
        onKeyDown={(e) => {
          if (e.key === 'Enter') apply()
        }}
        data-testid="import-output-tokens-input"
      />
      {valid ? null : <span className="bad">a whole number of tokens, or empty</span>}
    </label>
  )
}
