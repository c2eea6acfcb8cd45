import { useCallback, useMemo } from 'react'
import type { AimdParamsPatch, PartitionView } from '../../../../shared/contract'
import { EmptyState } from '../../components/empty-state'
import { Segmented } from '../../components/segmented'
import { formatClock, formatInt, formatNumber } from '../../lib/format'
import { useStore } from '../../store'
import { ALL_PARTITIONS, type ChartWindow } from '../../store/concurrency-slice'
import { lastBusy } from '../../store/samples'
import { ControllerPicker } from './controller-picker'
import { LimitChanges } from './limit-changes'
import { paceLine } from './pace-text'
import { ParamSlider } from './param-slider'
import { PARAM_SPECS } from './param-specs'
import { PartitionChart } from './partition-chart'
import { PauseStatus, RecentPauses } from './partition-pauses'

const WINDOWS: readonly { id: ChartWindow; label: string }[] = [
  { id: 'fit', label: 'Fit (≤ 1 h)' },
  { id: '2m', label: '2 min' },
  { id: '15m', label: '15 min' },
  { id: '1h', label: '1 h' },
]

/**
 * Busy partitions first: calls in flight or waiting now, then the most recently busy (from the
 * samples the charts hold, the database's history included), then by name.
 */
function busyFirst(partitions: readonly PartitionView[]): PartitionView[] {
  const busyNow = (p: PartitionView) => (p.inflight > 0 || p.waiting > 0 ? 1 : 0)
  const at = new Map(partitions.map((p) => [p.partition, lastBusy(p.partition)]))
  return [...partitions].sort(
    (a, b) =>
      busyNow(b) - busyNow(a) ||
      (at.get(b.partition) ?? 0) - (at.get(a.partition) ?? 0) ||
      a.partition.localeCompare(b.partition),
  )
}

export function ConcurrencyView() {
  const unordered = useStore((s) => s.partitions)
  const historyLoaded = useStore((s) => s.historyLoaded)
  const chartWindow = useStore((s) => s.chartWindow)
  const setChartWindow = useStore((s) => s.setChartWindow)
  // historyLoaded: the history just merged may change who was busy last.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const partitions = useMemo(() => busyFirst(unordered), [unordered, historyLoaded])
  const loaded = useStore((s) => s.schedulerLoaded)
  const applyToAll = useStore((s) => s.applyToAll)
  const setApplyToAll = useStore((s) => s.setApplyToAll)
  const setView = useStore((s) => s.setView)

  if (partitions.length === 0) {
    return (
      <div className="view">
        <div className="toolbar">
          <ControllerPicker />
        </div>
        <EmptyState
          title={loaded ? 'No partition has run yet' : 'Loading the scheduler…'}
          testId="concurrency-empty"
        >
          <p>
            Each provider + model gets its own concurrency limit, which rises while calls are used
            and succeed and drops once per burst of pushback (429, 503, 529). A refusal’s
            retry-after pauses the whole partition, and a budget the provider announces in its
            rate-limit headers paces every call. Charts appear here as soon as a task calls its
            provider.
          </p>
          <button type="button" className="button primary" onClick={() => setView('queue')}>
            Queue a batch
          </button>
        </EmptyState>
      </div>
    )
  }

  return (
    <div className="view concurrency-view">
      <div className="toolbar">
        <ControllerPicker />
        <Segmented
          options={WINDOWS}
          value={chartWindow}
          onChange={setChartWindow}
          label="Chart window"
          testId="chart-window"
          optionTestId={(id) => `chart-window-${id}`}
        />
        <label className="check" data-testid="apply-to-all">
          <input
            type="checkbox"
            checked={applyToAll}
            onChange={(e) => setApplyToAll(e.target.checked)}
          />
          Apply slider changes to all partitions
        </label>
        <span className="hint">
          Changes apply at once to running batches; the value shown is what the scheduler reports
          back.
        </span>
      </div>
      <div className="concurrency-layout">
        <div className="partition-list">
          {partitions.map((p) => (
            <PartitionCard key={p.partition} partition={p} />
          ))}
        </div>
        <LimitChanges />
      </div>
    </div>
  )
}

function PartitionCard({ partition: p }: { partition: PartitionView }) {
  const applyToAll = useStore((s) => s.applyToAll)
  const setSchedulerParams = useStore((s) => s.setSchedulerParams)
  const target = applyToAll ? ALL_PARTITIONS : p.partition
  const send = useCallback(
    (patch: AimdParamsPatch) => setSchedulerParams(target, patch),
    [setSchedulerParams, target],
  )
  return (
    <section className="panel partition" data-testid="partition-card" data-partition={p.partition}>
      <div className="panel-head">
        <h2 className="mono">{p.partition}</h2>
        <dl className="partition-stats">
          <Stat label="limit" value={formatNumber(p.limit, 1)} tone="accent" />
          <Stat label="effective" value={formatInt(p.concurrency)} tone="teal" />
          <Stat label="in flight" value={formatInt(p.inflight)} tone="green" />
          <Stat label="waiting" value={formatInt(p.waiting)} />
          <Stat label="throttles" value={formatInt(p.throttles)} tone="red" />
          <Stat label="successes" value={formatInt(p.successes)} />
        </dl>
      </div>
      {p.stopped ? <StoppedBanner partition={p.partition} reason={p.stopped.reason} /> : null}
      {p.storeOutage ? (
        <p className="stopped-banner" role="status" data-testid="store-outage">
          <strong>Waiting for the team store.</strong> {p.storeOutage}
        </p>
      ) : null}
      {p.pace ? (
        <p className="hint pace-line" data-testid="pace-line">
          {paceLine(p.pace)}
        </p>
      ) : null}
      <PartitionChart partition={p.partition} />
      <PauseStatus partition={p} />
      <RecentPauses partition={p.partition} />
      {p.lastChange ? (
        <p className="hint last-change">
          Last change {formatClock(p.lastChange.ts)}: {formatNumber(p.lastChange.from, 2)} →{' '}
          {formatNumber(p.lastChange.to, 2)} ({p.lastChange.reason})
        </p>
      ) : null}
      <div className="params" data-testid="scheduler-params">
        {PARAM_SPECS.map((spec) => (
          <ParamSlider
            key={spec.name}
            spec={spec}
            partition={p.partition}
            applied={spec.read(p.params)}
            send={send}
          />
        ))}
      </div>
    </section>
  )
}

/** A setup failure stopped the partition: why, what to do, and the button once it is done. */
function StoppedBanner({ partition, reason }: { partition: string; reason: string }) {
  const resumePartition = useStore((s) => s.resumePartition)
  return (
    <div className="stopped-banner" role="alert" data-testid="partition-stopped">
      <p>
        <strong>Stopped.</strong> {reason}
      </p>
      <button
        type="button"
        className="button primary"
        data-testid="resume-partition"
        onClick={() => void resumePartition(partition)}
      >
        Resume
      </button>
    </div>
  )
}

function Stat({ label, value, tone }: { label: string; value: string; tone?: string }) {
  return (
    <div className={`mini-stat${tone ? ` tone-${tone}` : ''}`}>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  )
}
