import { useCallback, useEffect, useState } from 'react'
import type { CapPeriod, CommandError, SpendCapView } from '../../../../shared/contract'
import { formatUsd } from '../../../../shared/format'
import { InlineError } from '../../components/inline-error'
import { call } from '../../store/api'
import { useStore } from '../../store'

/** How often the section reads the caps while it is shown: spend and reservations move per call. */
const REFRESH_MS = 1000

/** What the runner writes as the reason of a batch a cap held (spend-budget.ts, spend-caps.ts). */
const HELD = 'held by budget: '

/**
 * The spend caps kept in the database (`pacer budgets`): spend, reserved and left per cap, each
 * amount editable; a banner when a cap holds work. Saving a cap resumes the batches it held.
 */
export function BudgetsPanel() {
  const [caps, setCaps] = useState<SpendCapView[]>([])
  const [error, setError] = useState<CommandError | null>(null)
  const batches = useStore((s) => s.batches)
  const held = batches.filter((b) => b.stopReason?.startsWith(HELD) && b.state === 'paused')

  const refresh = useCallback(async () => {
    const reply = await call((api) => api.listBudgets({}))
    if (reply.ok) setCaps(reply.value)
    else setError(reply.error)
  }, [])
  useEffect(() => {
    // The first read at once, off the effect's own turn; then every REFRESH_MS while shown.
    const first = setTimeout(() => void refresh(), 0)
    const timer = setInterval(() => void refresh(), REFRESH_MS)
    return () => {
      clearTimeout(first)
      clearInterval(timer)
    }
  }, [refresh])

  const save = async (input: Parameters<typeof saveInput>[0]) => {
    setError(null)
    const reply = await call((api) => api.setBudget(saveInput(input)))
    if (!reply.ok) {
      setError(reply.error)
      return false
    }
    setCaps(reply.value.caps)
    return true
  }
  const remove = async (id: number) => {
    setError(null)
    const reply = await call((api) => api.removeBudget({ id }))
    if (reply.ok) setCaps(reply.value.caps)
    else setError(reply.error)
  }
  const reached = caps.filter((c) => c.leftMicros === 0 || c.percent >= 100)

  return (
    <section className="panel" data-testid="budgets">
      <div className="panel-head">
        <h2>Budgets</h2>
        <span className="hint">
          caps every process on this database holds to; a call is sent only if its worst case fits
        </span>
      </div>
      {held.length > 0 || reached.length > 0 ? (
        <div className="banner banner-warn" role="alert" data-testid="budget-reached">
          {reached.map((c) => (
            <div key={c.id}>
              Cap reached: {formatUsd(c.capMicros)} on {c.scope}
              {c.period === 'total' ? '' : ` (${c.periodKey}, ${c.zone})`}
            </div>
          ))}
          {held.map((b) => (
            <div key={b.id}>
              {b.name}: {b.stopReason}
            </div>
          ))}
          <div>Raise a cap to resume the held tasks; nothing already paid is sent again.</div>
        </div>
      ) : null}
      {caps
        .filter((c) => c.warnedPercent !== null && !reached.includes(c))
        .map((c) => (
          <div className="banner banner-warn" key={c.id} data-testid={`budget-warning-${c.id}`}>
            Warning: {c.warnedPercent}% of the {formatUsd(c.capMicros)} cap on {c.scope} reached
            {c.period === 'total' ? '' : ` (${c.periodKey}, ${c.zone})`}: {formatUsd(c.spentMicros)}{' '}
            spent
          </div>
        ))}
      <InlineError error={error} testId="budgets-error" />
      {caps.length > 0 ? (
        <table className="data-table" data-testid="budgets-table">
          <thead>
            <tr>
              <th>Cap on</th>
              <th>Period</th>
              <th className="num">Spent</th>
              <th className="num">Reserved</th>
              <th className="num">Left</th>
              <th className="num">Used</th>
              <th>Cap (USD)</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {caps.map((c) => (
              <CapRow key={c.id} cap={c} onSave={save} onRemove={remove} />
            ))}
          </tbody>
        </table>
      ) : (
        <p className="hint" data-testid="budgets-empty">
          No caps yet. Add one below, or with pacer budgets set.
        </p>
      )}
      <AddCap onSave={save} />
    </section>
  )
}

interface CapInput {
  usd: number
  taskType: string | null
  provider: string | null
  model: string | null
  period: CapPeriod
  zone: string
}

function saveInput(c: CapInput) {
  return {
    usd: c.usd,
    period: c.period,
    zone: c.zone,
    ...(c.taskType ? { taskType: c.taskType } : {}),
    ...(c.provider ? { provider: c.provider } : {}),
    ...(c.model ? { model: c.model } : {}),
  }
}

function CapRow({
  cap,
  onSave,
  onRemove,
}: {
  cap: SpendCapView
  onSave: (c: CapInput) => Promise<boolean>
  onRemove: (id: number) => Promise<void>
}) {
  const [draft, setDraft] = useState(String(cap.capMicros / 1e6))
  const amount = Number(draft)
  const valid = draft.trim() !== '' && Number.isFinite(amount) && amount >= 0
  return (
    <tr data-testid={`budget-row-${cap.id}`}>
      <td>{cap.scope}</td>
      <td>{cap.period === 'total' ? 'all time' : `${cap.periodKey} (${cap.zone})`}</td>
      <td className="num" data-testid={`budget-spent-${cap.id}`}>
        {formatUsd(cap.spentMicros)}
        {cap.inDoubtMicros > 0 ? ` (+${formatUsd(cap.inDoubtMicros)} in doubt)` : ''}
      </td>
      <td className="num" data-testid={`budget-reserved-${cap.id}`}>
        {formatUsd(cap.reservedMicros)}
      </td>
      <td className="num" data-testid={`budget-left-${cap.id}`}>
        {formatUsd(cap.leftMicros)}
      </td>
      <td className="num">{cap.percent}%</td>
      <td>
        <input
          className="input"
          inputMode="decimal"
          aria-label={`Cap in USD on ${cap.scope}`}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          data-testid={`budget-cap-input-${cap.id}`}
        />
        <button
          type="button"
          className="button"
          disabled={!valid}
          onClick={() => void onSave({ ...cap, usd: amount })}
          data-testid={`budget-save-${cap.id}`}
        >
          Save
        </button>
      </td>
      <td>
        <button
          type="button"
          className="button"
          onClick={() => void onRemove(cap.id)}
          data-testid={`budget-remove-${cap.id}`}
        >
          Remove
        </button>
      </td>
    </tr>
  )
}

const PERIODS: { id: CapPeriod; label: string }[] = [
  { id: 'total', label: 'all time' },
  { id: 'day', label: 'per day' },
  { id: 'month', label: 'per month' },
]

function AddCap({ onSave }: { onSave: (c: CapInput) => Promise<boolean> }) {
  const [usd, setUsd] = useState('')
  const [taskType, setTaskType] = useState('')
  const [model, setModel] = useState('')
  const [period, setPeriod] = useState<CapPeriod>('day')
  const [local, setLocal] = useState(false)
  const amount = Number(usd)
  const valid = usd.trim() !== '' && Number.isFinite(amount) && amount >= 0
  const add = async () => {
    // provider/model, as pacer budgets set --model takes it; a bare name is a provider.
    const slash = model.indexOf('/')
    const provider = model === '' ? null : slash < 0 ? model : model.slice(0, slash)
    const zone = local ? Intl.DateTimeFormat().resolvedOptions().timeZone : 'UTC'
    const ok = await onSave({
      usd: amount,
      taskType: taskType.trim() || null,
      provider,
      model: slash < 0 ? null : model.slice(slash + 1),
      period,
      zone,
    })
    if (ok) setUsd('')
  }
  return (
    <div className="toolbar" data-testid="budget-add">
      <input
        className="input"
        inputMode="decimal"
        placeholder="USD"
        aria-label="New cap in USD"
        value={usd}
        onChange={(e) => setUsd(e.target.value)}
        data-testid="budget-add-usd"
      />
      <input
        className="input"
        placeholder="task type (any)"
        aria-label="Task type"
        value={taskType}
        onChange={(e) => setTaskType(e.target.value)}
        data-testid="budget-add-type"
      />
      <input
        className="input"
        placeholder="provider/model (any)"
        aria-label="Provider and model"
        value={model}
        onChange={(e) => setModel(e.target.value)}
        data-testid="budget-add-model"
      />
      <select
        className="input"
        aria-label="Period"
        value={period}
        onChange={(e) => setPeriod(e.target.value as CapPeriod)}
        data-testid="budget-add-period"
      >
        {PERIODS.map((p) => (
          <option key={p.id} value={p.id}>
            {p.label}
          </option>
        ))}
      </select>
      <label className="hint">
        <input type="checkbox" checked={local} onChange={(e) => setLocal(e.target.checked)} /> local
        time (else UTC)
      </label>
      <button
        type="button"
        className="button"
        disabled={!valid}
        onClick={() => void add()}
        data-testid="budget-add-save"
      >
        Add cap
      </button>
    </div>
  )
}
