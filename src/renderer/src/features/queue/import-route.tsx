import type { CommandResults } from '../../../../shared/contract'
import { formatUsd } from '../../../../shared/format'
import { useStore } from '../../store'
import type { ImportRoute } from '../../store/import-slice'

/**
 * Live or through the vendors' batch APIs (`pacer run --batch-api`): the forecast's two prices
 * side by side. The Batch API is offered only where the engine said the tasks can take it.
 */
export function ImportRouteChoice({
  preview,
  route,
}: {
  preview: CommandResults['batches:preview']
  route: ImportRoute
}) {
  const setOptions = useStore((s) => s.setImportOptions)
  const total = preview.forecast?.total
  const refusal = preview.batchApiRefusal ?? null
  const choices: {
    id: ImportRoute
    title: string
    price: string
    note: string
    disabled: boolean
  }[] = [
    {
      id: 'live',
      title: 'Live',
      price: total ? formatUsd(total.costMicros) : '—',
      note: 'answers as the calls return, paced to the provider',
      disabled: false,
    },
    {
      id: 'batch',
      title: 'Batch API',
      price: total?.batchCostMicros === undefined ? '—' : formatUsd(total.batchCostMicros),
      note: 'half price, results within 24 h',
      disabled: refusal !== null,
    },
  ]
  return (
    <div
      className="import-route"
      role="radiogroup"
      aria-label="How the calls go"
      data-testid="import-route"
    >
      {choices.map((c) => (
        <label
          key={c.id}
          className={`route-card${route === c.id ? ' chosen' : ''}${c.disabled ? ' disabled' : ''}`}
          data-testid={`import-route-${c.id}`}
        >
          <input
            type="radio"
            name="import-route"
            value={c.id}
            checked={route === c.id}
            disabled={c.disabled}
            onChange={() => setOptions({ route: c.id })}
          />
          <span className="route-title">{c.title}</span>
          <span className="route-price num" data-testid={`import-route-${c.id}-price`}>
            {c.price}
          </span>
          <span className="muted">{c.note}</span>
        </label>
      ))}
      {refusal !== null ? (
        <p className="hint" data-testid="import-route-refusal">
          Batch API unavailable: {refusal}
        </p>
      ) : null}
    </div>
  )
}
