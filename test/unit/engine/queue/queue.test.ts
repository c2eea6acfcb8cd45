import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BATCH_TRANSITIONS, type BatchAction } from '../../../../src/shared/batch-states'
import { BatchState } from '../../../../src/shared/contract'
import { TaskQueue, type NewBatch, type NewTask } from '../../../../src/main/engine/queue/queue'
import { fakeClock, type FakeClock } from '../../../helpers/clock'
import { openLedgerDb } from '../../../helpers/ledger-db'

const LEASE_MS = 30_000

function task(seq: number, over: Partial<NewTask> = {}): NewTask {
  return {
    seq,
    type: 'summarize',
    payloadJson: `{"n":${seq}}`,
    fp: `fp${seq}`,
    key: null,
    steps: 1,
    provider: 'sim',
    model: 'sim-small',
    ...over,
  }
}

const batch = (name: string, over: Partial<NewBatch> = {}): NewBatch => ({
  name,
  source: null,
  sourceHash: null,
  audit: false,
  ...over,
})

let store: ReturnType<typeof openLedgerDb>
let clock: FakeClock
let queue: TaskQueue

beforeEach(() => {
  store = openLedgerDb()
  clock = fakeClock()
  queue = new TaskQueue(store.db, clock)
})
afterEach(() => store.close())

/** A new batch, one millisecond after the previous one (console batches run oldest first). */
function enqueue(name: string, tasks: NewTask[], over: Partial<NewBatch> = {}): string {
  clock.advance(1)
  return queue.createBatch(batch(name, over), tasks)
}

describe('enqueue', () => {
  it('creates a running batch with its tasks queued in order', () => {
    const id = enqueue('b', [task(1), task(2), task(3)])
    expect(queue.batch(id)).toMatchObject({
      id,
      name: 'b',
      state: 'running',
      audit: false,
      total: 3,
      counts: { queued: 3, running: 0, succeeded: 0, reused: 0, failed: 0, cancelled: 0 },
      createdAt: clock.now(),
    })
    const { rows, total } = queue.listTasks({ batchId: id, offset: 0, limit: 10 })
    expect(total).toBe(3)
    expect(rows.map((r) => [r.seq, r.status, r.fp])).toEqual([
      [1, 'queued', 'fp1'],
      [2, 'queued', 'fp2'],
      [3, 'queued', 'fp3'],
    ])
    expect(queue.listBatches().map((b) => b.id)).toEqual([id])
  })

  it('is all or nothing: a task the table refuses leaves no batch behind', () => {
    const bad = task(2, { type: null as unknown as string })
    expect(() => enqueue('b', [task(1), bad])).toThrow(/NOT NULL/)
    expect(queue.listBatches()).toEqual([])
    expect(queue.listTasks({ offset: 0, limit: 10 }).total).toBe(0)
  })
})

describe('pick', () => {
  it('takes console batches oldest first and each batch in seq order, never a task twice', () => {
    const older = enqueue('older', [task(2), task(1)])
    const newer = enqueue('newer', [task(1)])
    const picked = [1, 2, 3].map(() => queue.pick('w1', LEASE_MS, null))
    expect(picked.map((t) => [t?.batchId, t?.seq])).toEqual([
      [older, 1],
      [older, 2],
      [newer, 1],
    ])
    expect(picked[0]).toMatchObject({ attempts: 1, payload: '{"n":1}', audit: false })
    expect(queue.pick('w2', LEASE_MS, null)).toBeNull()
    expect(queue.counts(older)).toMatchObject({ queued: 0, running: 2 })
  })

  it('leaves batches that are not running, or driven by a `pacer run`, to others', () => {
    const paused = enqueue('paused', [task(1)], { state: 'paused' })
    const driven = enqueue('driven', [task(1)], { driver: 'cli-1', audit: true })
    expect(queue.pick('w1', LEASE_MS, null)).toBeNull()
    // The driver names its own batches, in its order; a paused one stays put.
    const t = queue.pick('cli-1', LEASE_MS, [paused, driven])
    expect(t).toMatchObject({ batchId: driven, audit: true })
  })

  it('gives a task whose lease ran out back to the queue and interrupts its batch', () => {
    const id = enqueue('b', [task(1)])
    const t = queue.pick('w1', LEASE_MS, null)!
    clock.advance(LEASE_MS - 1)
    expect(queue.renewTask(t.id, 'w1', LEASE_MS)).toBe(true)
    clock.advance(LEASE_MS + 1)
    expect(queue.requeueExpired()).toEqual({ requeued: 1, batchIds: [id] })
    expect(queue.batchState(id)).toBe('interrupted')
    // Fenced: the old worker can no longer finish it.
    expect(queue.finishTask(t.id, 'w1', 'succeeded', 'late', null)).toBe(false)
    expect(queue.counts(id)).toMatchObject({ queued: 1, running: 0 })
  })
})

describe('batch state transitions follow BATCH_TRANSITIONS', () => {
  const actions = ['pause', 'resume', 'cancel'] as const
  const cases = actions.flatMap((action) =>
    BatchState.options.map((state) => [action, state] as const),
  )

  it.each(cases)('%s from %s', (action, state) => {
    const id = enqueue('b', [task(1)], { state })
    const { from, to } = BATCH_TRANSITIONS[action]
    const allowed = from.includes(state)
    expect(queue.applyBatchAction(id, action)).toBe(allowed)
    expect(queue.batchState(id)).toBe(allowed ? to : state)
  })

  it('refuses to pause a cancelled batch, changing nothing', () => {
    const id = enqueue('b', [task(1)], { state: 'cancelled' })
    const before = queue.batch(id)
    clock.advance(1_000)
    expect(queue.applyBatchAction(id, 'pause')).toBe(false)
    expect(queue.batch(id)).toEqual(before)
  })

  it('pauses an interrupted batch (the engine rule the console now follows)', () => {
    const id = enqueue('b', [task(1)], { state: 'interrupted' })
    expect(queue.applyBatchAction(id, 'pause')).toBe(true)
    expect(queue.batchState(id)).toBe('paused')
  })

  it.each(BatchState.options)('retry runs a %s batch with failed tasks again', (state) => {
    const id = enqueue('b', [task(1), task(2)])
    const t = queue.pick('w1', LEASE_MS, null)!
    queue.finishTask(t.id, 'w1', 'failed', null, 'boom')
    queue.setBatchState(id, state)
    expect(queue.retry({ batchId: id })).toEqual({ count: 1, fps: ['fp1'] })
    const allowed = BATCH_TRANSITIONS.retry.from.includes(state)
    expect(queue.batchState(id)).toBe(allowed ? BATCH_TRANSITIONS.retry.to : state)
    expect(queue.counts(id)).toMatchObject({ queued: 2, failed: 0 })
  })

  it('covers every action the console offers', () => {
    const all: BatchAction[] = ['pause', 'resume', 'cancel', 'retry']
    expect(Object.keys(BATCH_TRANSITIONS).sort()).toEqual([...all].sort())
  })
})

describe('status counters', () => {
  /** What the counters must equal: a count of the batch's tasks by status. */
  const counted = (batchId: string) => {
    const counts = { queued: 0, running: 0, succeeded: 0, reused: 0, failed: 0, cancelled: 0 }
    for (const r of store.db
      .prepare('SELECT status, COUNT(*) AS n FROM tasks WHERE batch_id = ? GROUP BY status')
      .all(batchId) as { status: keyof typeof counts; n: number }[]) {
      counts[r.status] = r.n
    }
    return counts
  }

  it('follow every status change, in every path, as a count of the tasks would', () => {
    const a = enqueue(
      'a',
      Array.from({ length: 12 }, (_, i) => task(i + 1)),
    )
    const b = enqueue('b', [task(1), task(2), task(3)])
    expect(queue.counts(a)).toEqual(counted(a))
    const picked = Array.from({ length: 8 }, () => queue.pick('w1', LEASE_MS, [a])!)
    queue.finishTask(picked[0]!.id, 'w1', 'succeeded', 'r0', null)
    queue.finishTask(picked[1]!.id, 'w1', 'reused', 'r0', null)
    queue.finishTask(picked[2]!.id, 'w1', 'failed', null, 'boom')
    queue.finishTask(picked[3]!.id, 'w1', 'cancelled', null, 'stop')
    // A finish fenced out (another worker's task) changes nothing.
    expect(queue.finishTask(picked[4]!.id, 'w2', 'succeeded', 'x', null)).toBe(false)
    queue.requeueTask(picked[4]!.id, 'w1', 'shutdown')
    expect(queue.counts(a)).toEqual(counted(a))
    // Leases running out, a retry, a cancel of the rest.
    clock.advance(LEASE_MS + 1)
    queue.requeueExpired()
    expect(queue.counts(a)).toEqual(counted(a))
    queue.retry({ batchId: a })
    expect(queue.counts(a)).toEqual(counted(a))
    queue.pick('w1', LEASE_MS, [a])
    queue.applyBatchAction(a, 'cancel')
    queue.cancelQueued(a)
    expect(queue.counts(a)).toEqual(counted(a))
    expect(queue.counts(a)).toMatchObject({ queued: 0, succeeded: 1, reused: 1 })
    // A task of a cancelled batch given back ends cancelled, and is counted so.
    const running = queue.listTasks({ batchId: a, statuses: ['running'], offset: 0, limit: 10 })
    for (const t of running.rows) queue.requeueTask(t.id, 'w1', null)
    expect(queue.counts(a)).toEqual(counted(a))
    expect(queue.counts(a).running).toBe(0)
    // The other batch was never touched.
    expect(queue.counts(b)).toEqual({ ...counted(b), queued: 3 })
  })

  it('settle once the counters show nothing queued or running', () => {
    const id = enqueue('b', [task(1), task(2)])
    const [t1, t2] = [queue.pick('w1', LEASE_MS, null)!, queue.pick('w1', LEASE_MS, null)!]
    queue.finishTask(t1.id, 'w1', 'succeeded', 'r', null)
    expect(queue.settleBatch(id)).toBe('running')
    queue.finishTask(t2.id, 'w1', 'failed', null, 'x')
    expect(queue.settleBatch(id)).toBe('done')
  })

  it('page a batch in id order from where its tasks start, with the total from the counters', () => {
    enqueue('other', [task(1), task(2)])
    const id = enqueue(
      'b',
      Array.from({ length: 30 }, (_, i) => task(i + 1)),
    )
    enqueue('later', [task(1)])
    const page = queue.listTasks({ batchId: id, offset: 25, limit: 10 })
    expect(page.total).toBe(30)
    expect(page.rows.map((r) => r.seq)).toEqual([26, 27, 28, 29, 30])
    expect(new Set(page.rows.map((r) => r.batchId))).toEqual(new Set([id]))
    expect(queue.listTasks({ batchId: id, offset: 40, limit: 10 }).rows).toEqual([])
  })
})
