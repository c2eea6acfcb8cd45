import { useMemo } from 'react'
import type { PartitionView } from '../../../../shared/contract'
import { formatClock } from '../../lib/format'
import { useStore } from '../../store'
import { pauseWhy, recentPauses } from './pace-text'

/** Pauses a card lists: enough to see a pattern, few enough not to crowd the sliders. */
const RECENT_PAUSES = 3

/** While the partition is paused: until when, and what the provider said or the evidence was. */
export function PauseStatus({ partition: p }: { partition: PartitionView }) {
  if (p.pausedUntil === null) return null
  const why = pauseWhy(p.pauseReason)
  return (
    <div className="paused-until" data-testid="paused-until">
      <p>
        Paused until {formatClock(p.pausedUntil)}: no call goes before then (shaded on the chart)
      </p>
      {why ? (
        <p className="pause-why" data-testid="pause-reason">
          {why}
        </p>
      ) : null}
    </div>
  )
}

/** The partition's last pauses: when each began, how long it held, and why. */
export function RecentPauses({ partition }: { partition: string }) {
  const pauses = useStore((s) => s.pauses)
  const lines = useMemo(() => recentPauses(pauses, partition, RECENT_PAUSES), [pauses, partition])
  if (lines.length === 0) return null
  return (
    <div className="recent-pauses" data-testid="recent-pauses">
      <h3>Recent pauses</h3>
      <ol>
        {lines.map((line) => (
          <li key={line.key} data-testid="recent-pause">
            <span className="change-time">{line.time}</span>
            <span className="pause-length">{line.length}</span>
            <span className="pause-why">
              {line.why ?? 'why unknown: under way when the console opened'}
            </span>
          </li>
        ))}
      </ol>
    </div>
  )
}
