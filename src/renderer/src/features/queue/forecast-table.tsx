import type { ForecastTypeView, ForecastView } from '../../../../shared/contract'
import { formatUsd } from '../../../../shared/money'
import { formatInt, formatTokens } from '../../lib/format'

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
      {forecast.unpricedTasks > 0 ? (
        <p className="hint">
          {formatInt(forecast.unpricedTasks)} task(s) use a model without a price: their cost is
          unknown, not zero. Add a price in Settings.
        </p>
      ) : null}
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
      <td className="num">{formatInt(row.calls)}</td>
      <td className="num">{formatTokens(row.inputTokens)}</td>
      <td className="num">{formatTokens(row.outputTokens)}</td>
      <td className="num">{formatUsd(row.costMicros, 'glance')}</td>
      <td className="num good">{formatUsd(row.savedByDedupMicros, 'glance')}</td>
    </tr>
  )
}
