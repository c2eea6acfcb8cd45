import { useEffect, useRef } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { axis, chartTheme, fitWidth } from '../../lib/chart-theme'
import { formatClock } from '../../lib/format'
import { useStore } from '../../store'
import type { ChartWindow } from '../../store/concurrency-slice'
import { ringFor, seedSamples } from '../../store/samples'
import { pauseAt, pauseBands } from './pause-bands'
import { pauseTitle } from './pace-text'

/** The shortest window, and the widest (what the database keeps for the chart). */
const MIN_WINDOW_MS = 120_000
const HOUR_MS = 3_600_000
const WINDOW_MS: Record<Exclude<ChartWindow, 'fit'>, number> = {
  '2m': MIN_WINDOW_MS,
  '15m': 900_000,
  '1h': HOUR_MS,
}

/**
 * The window's start: a fixed span, or 'fit', from the first sample of the last hour (so a run
 * that ended 40 min ago is drawn whole, and a live one from its start), never under 2 min.
 */
function windowStart(choice: ChartWindow, firstTs: number | null, now: number): number {
  if (choice !== 'fit') return now - WINDOW_MS[choice]
  const first = firstTs ?? now
  return Math.max(now - HOUR_MS, Math.min(first, now - MIN_WINDOW_MS))
}
const HEIGHT = 220
/** Redraw at least this often even without new samples, so the time axis keeps sliding. */
const MIN_REDRAW_MS = 250

/**
 * The live AIMD chart of one partition. It reads the partition's sample ring on animation frames
 * rather than through React: samples arrive many times a second and React never re-renders for them.
 * Paused intervals are shaded behind the lines; hovering one shows why it happened.
 */
export function PartitionChart({ partition }: { partition: string }) {
  const box = useRef<HTMLDivElement>(null)

  useEffect(() => {
    const el = box.current
    if (!el) return
    const ring = ringFor(partition)
    // A partition that has been idle since the page opened has no samples: start from its view.
    if (ring.size === 0) {
      const view = useStore.getState().partitions.find((p) => p.partition === partition)
      if (view) seedSamples([view], Date.now())
    }
    const theme = chartTheme()
    let nowSec = Date.now() / 1000
    let fromSec = nowSec - MIN_WINDOW_MS / 1000
    // Throttle counts per drawn point, for the legend (the marker itself sits on the limit line).
    let throttleCounts: number[] = []
    let bands: [number, number][] = []
    const shadePauses = (u: uPlot): void => {
      const { ctx, bbox } = u
      ctx.save()
      ctx.fillStyle = `${theme.amber}38`
      for (const [from, to] of bands) {
        const x0 = u.valToPos(from, 'x', true)
        const x1 = u.valToPos(to, 'x', true)
        ctx.fillRect(x0, bbox.top, Math.max(2, x1 - x0), bbox.height)
      }
      ctx.restore()
    }

    // The reason of the pause under the pointer, as the chart's tooltip: a band says when, not why.
    const titlePause = (u: uPlot): void => {
      const left = u.cursor.left
      const atMs = left === undefined || left < 0 ? null : u.posToVal(left, 'x') * 1000
      const pause = atMs === null ? undefined : pauseAt(useStore.getState().pauses, partition, atMs)
      const title = pause ? pauseTitle(pause) : ''
      if (el.title !== title) el.title = title
    }

    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: HEIGHT,
      cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      legend: { live: true },
      // Under the grid and the lines: a pause is the background of what happened meanwhile.
      hooks: { drawClear: [shadePauses], setCursor: [titlePause] },
      scales: {
        x: { time: true, range: () => [fromSec, nowSec] },
        y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil((max || 0) * 1.15))] },
      },
      axes: [
        // One line of HH:MM:SS: uPlot's default two-line date labels get clipped at the left edge.
        axis(theme, { space: 70, values: (_u, ticks) => ticks.map((t) => formatClock(t * 1000)) }),
        axis(theme, { size: 40 }),
      ],
      series: [
        // The legend's time in the axis's 24-hour clock (uPlot's default legend is 12-hour).
        { value: (_u, v) => (v == null ? '–' : formatClock(v * 1000)) },
        {
          label: 'limit',
          stroke: theme.accent,
          width: 2,
          paths: uPlot.paths.stepped!({ align: 1 }),
          value: (_u, v) => (v == null ? '–' : v.toFixed(1)),
        },
        {
          label: 'effective',
          stroke: theme.teal,
          width: 1.5,
          paths: uPlot.paths.stepped!({ align: 1 }),
          value: (_u, v) => (v == null ? '–' : String(v)),
        },
        {
          label: 'in flight',
          stroke: theme.green,
          fill: `${theme.green}26`,
          width: 1,
          value: (_u, v) => (v == null ? '–' : String(v)),
        },
        {
          label: 'throttled',
          stroke: theme.red,
          paths: () => null,
          points: { show: true, size: 9, width: 2, stroke: theme.red, fill: theme.red },
          value: (_u, _v, _s, idx) => (idx == null ? '–' : String(throttleCounts[idx] ?? 0)),
        },
      ],
    }
    const chart = new uPlot(opts, [[], [], [], [], []], el)
    const stopFit = fitWidth(chart, el, HEIGHT)

    let frame = 0
    let drawnVersion = -1
    let drawnWindow: ChartWindow | null = null
    let drawnAt = 0
    const draw = (t: number): void => {
      frame = requestAnimationFrame(draw)
      const windowChoice = useStore.getState().chartWindow
      if (
        ring.version === drawnVersion &&
        windowChoice === drawnWindow &&
        t - drawnAt < MIN_REDRAW_MS
      ) {
        return
      }
      drawnVersion = ring.version
      drawnWindow = windowChoice
      drawnAt = t
      const now = Date.now()
      nowSec = now / 1000
      const choice = useStore.getState().chartWindow
      const from = windowStart(choice, ring.firstTs, now)
      fromSec = from / 1000
      el.dataset.window = choice
      const d = ring.since(from)
      el.dataset.points = String(d.ts.length)
      // The last value holds until the next sample (an idle engine sends none): draw it up to
      // now — unless the stream is down, where the line stopping is the honest picture.
      const last = d.ts.length - 1
      if (last >= 0 && d.ts[last]! < now && useStore.getState().connection === 'open') {
        d.ts.push(now)
        d.limit.push(d.limit[last]!)
        d.concurrency.push(d.concurrency[last]!)
        d.inflight.push(d.inflight[last]!)
        d.throttles.push(0)
      }
      throttleCounts = d.throttles
      bands = pauseBands(useStore.getState().pauses, partition, from, now)
      el.dataset.pauses = String(bands.length)
      chart.setData([
        d.ts.map((ts) => ts / 1000),
        d.limit,
        d.concurrency,
        d.inflight,
        d.limit.map((limit, i) => ((d.throttles[i] ?? 0) > 0 ? limit : null)),
      ])
      // Off hover, the legend shows the latest values rather than dashes.
      if (d.ts.length > 0 && (chart.cursor.left === undefined || chart.cursor.left < 0)) {
        chart.setLegend({ idx: d.ts.length - 1 })
      }
      el.dataset.samples = String(ring.received)
    }
    frame = requestAnimationFrame(draw)

    return () => {
      cancelAnimationFrame(frame)
      stopFit()
      chart.destroy()
    }
  }, [partition])

  return (
    <div
      ref={box}
      className="chart"
      data-testid={`concurrency-chart-${partition}`}
      data-samples={0}
      data-points={0}
      data-pauses={0}
    />
  )
}
