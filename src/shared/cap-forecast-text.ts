// What a batch would do to each spend cap, in one line per cap: `pacer forecast` prints it under
// its table and the console's import preview shows the same words.
import type { CapForecastView } from './contract'
import { formatInt, formatUsd } from './format'

/** One cap's line: it fits, or from about which task it would hold the rest; and what refuses. */
export function capForecastLine(c: CapForecastView, totalTasks: number): string {
  const name = `${c.name}${c.periodKey === '' ? '' : ` for ${c.periodKey}`}`
  const money =
    `${formatUsd(c.capMicros)}, ${formatUsd(c.spentMicros)} spent` +
    (c.reservedMicros > 0 ? `, ${formatUsd(c.reservedMicros)} reserved` : '') +
    `, ${formatUsd(c.leftMicros)} left`
  const parts = [
    c.hitAt === null
      ? `fits under ${name} (${money}): forecast ${formatUsd(c.forecastMicros)}`
      : `would hit ${name} (${money}): forecast ${formatUsd(c.forecastMicros)}, held from about ` +
        `task ${formatInt(c.hitAt.task)} of ${formatInt(totalTasks)} (line ${formatInt(c.hitAt.line)}) on`,
  ]
  if (c.minimumPasses) {
    parts.push(
      `its input alone costs ${formatUsd(c.minimumMicros)}, more than the ` +
        `${formatUsd(Math.max(0, c.capMicros - c.spentMicros))} not spent: ` +
        'pacer run refuses to start it (--up-to-cap runs it until the cap holds the rest)',
    )
  }
  if (c.unpricedTasks > 0) {
    parts.push(
      `${formatInt(c.unpricedTasks)} task(s) on ${c.unpricedModels.join(', ')} have no price: ` +
        'refused under it (price them in Settings > Price overrides)',
    )
  }
  return `cap: ${parts.join('; ')}`
}
