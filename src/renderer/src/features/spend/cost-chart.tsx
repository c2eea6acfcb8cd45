import { useEffect, useRef } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import type { CostPoint } from '../../../../shared/contract'
import { axis, chartTheme, fitWidth } from '../../lib/chart-theme'
import { microsToUsd } from '../../../../shared/money'
import { formatClock, formatDateTime, formatInt, formatUsdValue } from '../../../../shared/format'

const HEIGHT = 200

/** Cost per time bucket (bars, left axis) with the number of calls (line, right axis). */
export function CostChart({
  points,
  since,
  bucketMs,
}: {
  points: CostPoint[]
  since: number | undefined
  bucketMs: number
}) {
  const box = useRef<HTMLDivElement>(null)
  const chart = useRef<uPlot | null>(null)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const theme = chartTheme()
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: HEIGHT,
      cursor: { drag: { x: false, y: false } },
      scales: {
        // Set explicitly after each setData, to span the whole selected range.
        x: { time: true, auto: false },
        usd: { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 0.01] },
        calls: { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 1] },
      },
      axes: [
        // The 24-hour clock on the axis and in the legend alike (uPlot's defaults mix 12 h in).
        axis(theme, { space: 70, values: (_u, ticks) => ticks.map(timeTick) }),
        axis(theme, {
          scale: 'usd',
          size: 76,
          values: (_u, ticks) => ticks.map((t) => formatUsdValue(t)),
        }),
        axis(theme, { scale: 'calls', side: 1, size: 44, grid: { show: false } }),
      ],
      series: [
        { value: (_u, v) => (v == null ? '–' : formatDateTime(v * 1000)) },
        {
          label: 'cost',
          scale: 'usd',
          stroke: theme.accent,
          fill: `${theme.accent}99`,
          paths: uPlot.paths.bars!({ size: [0.7, 40], align: 0 }),
          points: { show: false },
          value: (_u, v) => (v == null ? '–' : formatUsdValue(v)),
        },
        {
          label: 'calls',
          scale: 'calls',
          stroke: theme.amber,
          width: 1.5,
          points: { show: false },
          value: (_u, v) => (v == null ? '–' : formatInt(v)),
        },
      ],
    }
    const u = new uPlot(opts, [[], [], []], el)
    chart.current = u
    const stopFit = fitWidth(u, el, HEIGHT)
    return () => {
      stopFit()
      u.destroy()
      chart.current = null
    }
  }, [])

  useEffect(() => {
    const u = chart.current
    if (!u) return
    u.setData([
      points.map((p) => p.ts / 1000),
      points.map((p) => microsToUsd(p.costMicros)),
      points.map((p) => p.calls),
    ])
    // The selected range, not just the buckets that had spend; "all" spans the data itself.
    const first = points[0]?.ts ?? Date.now() - bucketMs
    const from = Math.min(since ?? first - bucketMs / 2, first)
    const to = Math.max(Date.now(), (points[points.length - 1]?.ts ?? 0) + bucketMs)
    u.setScale('x', { min: from / 1000, max: to / 1000 })
  }, [points, since, bucketMs])

  return <div ref={box} className="chart" data-testid="cost-chart" />
}

/** An x tick (seconds): the time of day, or the day and time when the range spans days. */
function timeTick(seconds: number, _i: number, ticks: number[]): string {
  const span = (ticks[ticks.length - 1] ?? seconds) - (ticks[0] ?? seconds)
  return span > 86_400 ? formatDateTime(seconds * 1000) : formatClock(seconds * 1000)
}
