/**
 * Canvas charts cannot use CSS variables, so their colors are read from the stylesheet once per
 * chart: the theme stays defined in one place (styles.css).
 */
import type uPlot from 'uplot'

export interface ChartTheme {
  text: string
  muted: string
  grid: string
  accent: string
  teal: string
  green: string
  red: string
  amber: string
  font: string
}

export function chartTheme(): ChartTheme {
  const css = getComputedStyle(document.documentElement)
  const v = (name: string, fallback: string): string =>
    css.getPropertyValue(name).trim() || fallback
  return {
    text: v('--text', '#d6dde6'),
    muted: v('--text-muted', '#8b96a5'),
    grid: v('--chart-grid', '#262d36'),
    accent: v('--accent', '#4f9cf7'),
    teal: v('--teal', '#39c5cf'),
    green: v('--green', '#3fb950'),
    red: v('--red', '#f85149'),
    amber: v('--amber', '#d29922'),
    font: `11px ${v('--font-sans', 'system-ui, sans-serif')}`,
  }
}

export function axis(theme: ChartTheme, extra: uPlot.Axis = {}): uPlot.Axis {
  return {
    stroke: theme.muted,
    font: theme.font,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { stroke: theme.grid, width: 1 },
    ...extra,
  }
}

/** Keeps a chart as wide as its container. */
export function fitWidth(chart: uPlot, container: HTMLElement, height: number): () => void {
  const resize = (): void => {
    const width = Math.max(200, Math.floor(container.clientWidth))
    if (width !== chart.width) chart.setSize({ width, height })
  }
  const observer = new ResizeObserver(resize)
  observer.observe(container)
  resize()
  return () => observer.disconnect()
}
