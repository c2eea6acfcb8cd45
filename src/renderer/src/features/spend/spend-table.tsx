import type { TypeRollupView } from '../../../../shared/contract'
import { formatUsd } from '../../../../shared/format'
import { formatInt, formatRollupCost, formatTokens } from '../../lib/format'
import { formatRowMoney } from './spend-money'

type Row = TypeRollupView & { machine?: string }

/** Spend per task type; `withMachine`: per task type and machine (the team's ledger). */
export function SpendTable({
  byType,
  totals,
  withMachine = false,
  testId = 'spend-table',
}: {
  byType: Row[]
  totals: TypeRollupView
  withMachine?: boolean
  testId?: string
}) {
  return (
    <div className="table-scroll">
      <table className="data-table spend-table" data-testid={testId}>
        <thead>
          <tr>
            <th>Task type</th>
            {withMachine ? <th>Machine</th> : null}
            <th className="num">Runs</th>
            <th className="num">Executed</th>
            <th className="num">Reused</th>
            <th className="num">Duplicates</th>
            <th
              className="num"
              title="Calls a rerun (resume, takeover, retry) took from the journal: not sent again, their cost saved"
            >
              Replayed
            </th>
            <th className="num">Avg input tokens</th>
            <th className="num">Total tokens</th>
            <th className="num">Cost</th>
            <th
              className="num"
              title="Reuses of stored results, and calls replayed from the journal"
            >
              Saved by dedup
            </th>
            <th className="num">Wasted by duplicates</th>
            <th className="num" title="Input tokens read from / written to a prompt cache">
              Cache read / write
            </th>
            <th
              className="num"
              title="What cache reads saved, minus what cache writes cost above the input price"
            >
              Saved by cache
            </th>
            <th
              className="num"
              title="Calls answered through a provider batch API: their list price minus the batch price they were billed"
            >
              Saved by batch
            </th>
          </tr>
        </thead>
        <tbody>
          {byType.map((row) => (
            <SpendRow
              key={`${row.taskType}\u0000${row.machine ?? ''}`}
              row={row}
              withMachine={withMachine}
              testId="spend-row"
            />
          ))}
        </tbody>
        <tfoot>
          <SpendRow row={totals} label="Total" withMachine={withMachine} testId="spend-totals" />
        </tfoot>
      </table>
    </div>
  )
}

function SpendRow({
  row,
  label,
  withMachine,
  testId,
}: {
  row: Row
  label?: string
  withMachine: boolean
  testId: string
}) {
  return (
    <tr
      data-testid={testId}
      data-task-type={label ? undefined : row.taskType}
      data-machine={row.machine}
      data-runs={row.runs}
      data-executed={row.executed}
      data-reused={row.reused}
      data-duplicates={row.duplicates}
      data-replayed={row.replayed}
      data-total-tokens={row.totalTokens}
      data-cost-micros={row.costMicros}
      data-unpriced-calls={row.unpricedCalls}
      data-estimated-calls={row.estimatedCalls}
      data-saved-micros={row.savedMicros}
      data-wasted-micros={row.wastedMicros}
      data-cached-input-tokens={row.cachedInputTokens}
      data-cache-write-tokens={row.cacheWriteTokens}
      data-cache-saved-micros={row.cacheSavedMicros}
      data-cache-write-extra-micros={row.cacheWriteExtraMicros}
      data-batch-calls={row.batchCalls}
      data-batch-saved-micros={row.batchSavedMicros}
    >
      <td>{label ?? row.taskType}</td>
      {withMachine ? <td>{label ? '' : (row.machine ?? '')}</td> : null}
      <td className="num">{formatInt(row.runs)}</td>
      <td className="num">{formatInt(row.executed)}</td>
      <td className="num">{formatInt(row.reused)}</td>
      <td className={`num${row.duplicates ? ' bad' : ''}`}>{formatInt(row.duplicates)}</td>
      <td className="num">{formatInt(row.replayed)}</td>
      <td className="num">{formatInt(Math.round(row.avgInputTokens))}</td>
      <td className="num">{formatTokens(row.totalTokens)}</td>
      <td
        className="num"
        title={
          row.estimatedCalls > 0
            ? `${formatInt(row.estimatedCalls)} call(s) without reported usage: tokens and cost estimated (about 4 characters a token)`
            : undefined
        }
      >
        {formatRollupCost(row.costMicros, row.unpricedCalls, row.estimatedCalls)}
      </td>
      <td className="num good">{formatRowMoney(row, row.savedMicros)}</td>
      <td className={`num${row.wastedMicros ? ' bad' : ''}`}>
        {formatRowMoney(row, row.wastedMicros)}
      </td>
      <td className="num">
        {formatTokens(row.cachedInputTokens)} / {formatTokens(row.cacheWriteTokens)}
      </td>
      <td
        className="num good"
        title={`reads saved ${formatUsd(row.cacheSavedMicros)}; writes cost ${formatUsd(row.cacheWriteExtraMicros)} above the input price`}
      >
        {formatRowMoney(row, row.cacheSavedMicros - row.cacheWriteExtraMicros)}
      </td>
      <td
        className="num good"
        data-testid="spend-batch-saved"
        title={`${formatInt(row.batchCalls)} call(s) via batch, billed ${formatUsd(row.batchCostMicros)}`}
      >
        {formatRowMoney(row, row.batchSavedMicros)}
      </td>
    </tr>
  )
}
