import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { driveBatch } from '../../../../src/main/engine/app/batch-run'
import type { Runner } from '../../../../src/main/engine/runner'

/** A runner that emits what driveBatch listens to and stops at once. */
function fakeRunner(): Runner & EventEmitter {
  const runner = new EventEmitter() as Runner & EventEmitter
  Object.assign(runner, {
    stop: () => Promise.resolve(),
    abortAll: () => {},
    cancelRunning: () => {},
  })
  return runner
}

describe('driveBatch', () => {
  it('reads nothing once the run is over, though a look was scheduled before the end', async () => {
    const runner = fakeRunner()
    let closed = false
    let reads = 0
    const progress = () => {
      // What better-sqlite3 does on a statement of a closed connection.
      if (closed) throw new TypeError('The database connection is not open')
      reads++
      return { state: 'running', unfinished: 0 }
    }
    const run = driveBatch(
      {
        batchId: 'b1',
        runner,
        start: () => {},
        batch: () => null,
        progress,
        commit: () => {},
        interrupt: () => {},
        onStopped: () => () => {},
      },
      { graceMs: 0 },
    )
    // A task ends: a look at the batch is scheduled for the end of this turn...
    runner.emit('batch', 'b1')
    // ...but the run is already found over in this turn (the progress tick), and the caller
    // closes the database as soon as it hears so.
    run.stop()
    await run.done
    closed = true
    const readsAtEnd = reads
    // The scheduled look comes after the close: it must not touch the database.
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(reads).toBe(readsAtEnd)
  })
})
