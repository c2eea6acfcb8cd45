// A controller's memory as the pacing store keeps it: JSON, shared by every worker of a partition.
import type { ControllerMemory } from './store'

/** JSON has no infinities: "never" travels as null. */
export function finiteOrNull(ms: number): number | null {
  return Number.isFinite(ms) ? ms : null
}

/** A finite number the memory holds under `field`, or the fallback. */
export function numberOr(memory: ControllerMemory, field: string, fallback: number): number {
  const value = memory[field]
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}
