/**
 * "The latency drop's reference kept across a refused probe." A level's reference window
 * (latency-drop.ts) was learned afresh every time the limit came back to it, so a server that slows
 * as it fills and whose load fell just after a refused probe (its capacity rose, a tenant left) was
 * compared only with how fast it already was: #100021 (a cap of 30 that rose to 55 0.3 s after a
 * probe of 31 was refused) answered its 30 calls in 0.69 s instead of 1.18 s, and the next probe
 * came 4.8 s later. The window a level learned is kept while the limit comes back to that level
 * under the same refused level (a refused probe changes neither; a fall or a probe that carried
 * changes the refused level), and the level's windows are compared with it as well as with the
 * level's own first window; a drop that fired forgets it. Replacing the first window by the kept one
 * (instead of comparing with both) removed a false drop on #100033 (log-normal answers) whose
 * probe happened to meet a rise: 0.973 -> 0.920 used.
 */
export class KeptReference<T> {
  #kept: { level: number; ceiling: number; reference: T } | null = null

  /** The reference learned at `level` under `ceiling`, or null when there is none to keep. */
  reference(level: number, ceiling: number | null): T | null {
    const k = this.#kept
    if (k === null || ceiling === null || k.level !== level || k.ceiling !== ceiling) return null
    return k.reference
  }

  /** `reference` was learned at `level` under `ceiling` (null: no refused level, nothing kept). */
  keep(level: number, ceiling: number | null, reference: T): void {
    this.#kept = ceiling === null ? null : { level, ceiling, reference }
  }

  forget(): void {
    this.#kept = null
  }
}
