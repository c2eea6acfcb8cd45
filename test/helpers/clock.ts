import type { Clock } from '../../src/main/engine/core/types'

/** A clock that moves only when a test says so: the one fake clock of the test suite. */
export class FakeClock implements Clock {
  constructor(public t = 1_700_000_000_000) {}
  now(): number {
    return this.t
  }
  /** Moves time forward by `ms` and returns the new time. */
  advance(ms: number): number {
    this.t += ms
    return this.t
  }
}

export function fakeClock(start?: number): FakeClock {
  return new FakeClock(start)
}
