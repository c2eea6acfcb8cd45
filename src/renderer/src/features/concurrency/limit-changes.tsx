import type { LimitChangeView, PauseView } from '../../../../shared/contract'
import { formatClock, formatNumber } from '../../lib/format'
import { useStore } from '../../store'
import { pauseWhy } from './pace-text'

/** The list's rows: limit changes and pauses, newest first. */
type Row = { kind: 'change'; change: LimitChangeView } | { kind: 'pause'; pause: PauseView }

const MAX_ROWS = 200

/** Every move of a limit with its cause (growth, throttle, probe, headers, operator) and pauses. */
export function LimitChanges() {
  const changes = useStore((s) => s.limitChanges)
  const pauses = useStore((s) => s.pauses)
  const rows: Row[] = [
    ...changes.map((change): Row => ({ kind: 'change', change })),
    ...pauses.map((pause): Row => ({ kind: 'pause', pause })),
  ]
    .sort((a, b) => ts(b) - ts(a))
    .slice(0, MAX_ROWS)
  return (
    <section className="panel limit-changes">
      <div className="panel-head">
        <h2>Recent limit changes</h2>
      </div>
      {rows.length === 0 ? (
        <p className="hint">None yet.</p>
      ) : (
        <ol className="change-list" data-testid="limit-changes">
          {rows.map((row) =>
            row.kind === 'change' ? (
              <ChangeRow key={`c-${key(row.change)}`} change={row.change} />
            ) : (
              <PauseRow key={`p-${key(row.pause)}`} pause={row.pause} />
            ),
          )}
        </ol>
      )}
    </section>
  )
}

function ts(row: Row): number {
  return row.kind === 'change' ? row.change.ts : row.pause.ts
}

function key(x: LimitChangeView | PauseView): string {
  return `${x.partition}-${x.ts}-${'until' in x ? x.until : x.to}`
}

function ChangeRow({ change: c }: { change: LimitChangeView }) {
  const direction = c.to < c.from ? 'down' : c.to > c.from ? 'up' : 'same'
  const arrow = direction === 'down' ? '▼' : direction === 'up' ? '▲' : '='
  // A budget is requests or tokens per minute; every other change is a concurrency limit.
  const unit = c.cause === 'headers' ? '/min' : ''
  const from = c.cause === 'headers' && c.from === 0 ? '–' : formatNumber(c.from, 2)
  return (
    <li className={direction} data-cause={c.cause}>
      <span className="change-time">{formatClock(c.ts)}</span>
      <span className="change-delta">
        {arrow} {from} → {formatNumber(c.to, 2)}
        {unit}
        <span className={`cause-tag cause-${c.cause}`}>{c.cause}</span>
      </span>
      <span className="change-reason">{c.reason}</span>
      <span className="change-partition mono">{c.partition}</span>
    </li>
  )
}

function PauseRow({ pause: p }: { pause: PauseView }) {
  return (
    <li className="pause" data-cause="pause">
      <span className="change-time">{formatClock(p.ts)}</span>
      <span className="change-delta">
        ‖ until {formatClock(p.until)}
        <span className="cause-tag cause-pause">pause</span>
      </span>
      {/* The clock above already says until when: the reason line's ISO time would repeat it. */}
      <span className="change-reason">{pauseWhy(p.reason) ?? 'no call goes before then'}</span>
      <span className="change-partition mono">{p.partition}</span>
    </li>
  )
}
