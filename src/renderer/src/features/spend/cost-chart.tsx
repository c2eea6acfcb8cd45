import { useEffect, useRef } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import type { CostPoint } from '../../../../shared/contract'
import { axis, chartTheme, fitWidth } from '../../lib/chart-theme'
import { formatUsd, microsToUsd, usdToMicros } from '../../../../shared/money'
import { formatInt } from '../../lib/format'

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
        axis(theme),
        axis(theme, {
          scale: 'usd',
          size: 64,
          values: (_u, ticks) => ticks.map((t) => formatUsd(usdToMicros(t), 'glance')),
        }),
        axis(theme, { scale: 'calls', side: 1, size: 44, grid: { show: false } }),
      ],
      series: [
        {},
        {
          label: 'cost',
          scale: 'usd',
          stroke: theme.accent,
          fill: `${theme.accent}99`,
          paths: uPlot.paths.bars!({ size: [0.7, 40], align: 0 }),
          points: { show: false },
          value: (_u, v) => (v == null ? '–' : formatUsd(usdToMicros(v), 'glance')),
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
