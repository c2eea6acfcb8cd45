import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { CommandResult, Reply, TaskRow } from '../../../../src/shared/contract'
import { batch, deferred, fail, ok, storeOnFakePacer, task } from './fake-pacer'

type ListReply = Reply<CommandResult<'tasks:list'>>

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/** Lets the throttles' timers and the replies in flight settle. */
const settle = (ms = 0) => vi.advanceTimersByTimeAsync(ms)

function rows(from: number, n: number, patch: Partial<TaskRow> = {}): TaskRow[] {
  return Array.from({ length: n }, (_, i) => task(from + i, patch))
}

describe('tasks slice: paging', () => {
  it('fetches the window in view, showing it in flight until its rows arrive', async () => {
    const { store, fake } = storeOnFakePacer()
    const reply = deferred<ListReply>()
    fake.on('tasks:list', () => reply.promise)
    store.getState().ensureTaskRange(0, 40)
    expect(fake.inputs('tasks:list')).toEqual([{ offset: 0, limit: 500 }])
    expect(store.getState().taskPaging).toMatchObject({
      visible: { start: 0, end: 40 },
      inflight: [0],
    })
    expect(store.getState().taskListLoaded).toBe(false)

    reply.resolve(ok({ rows: rows(1, 3), total: 3 }))
    await settle()
    const s = store.getState()
    expect(s.taskPaging.inflight).toEqual([])
    expect(s.taskWindows[0]!.map((r) => r.id)).toEqual([1, 2, 3])
    expect(s).toMatchObject({ taskTotal: 3, taskListLoaded: true, taskListError: null })
  })

  it('fetches the windows a scroll reaches, at most ~10 times a second', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('tasks:list', ({ offset }) => ok({ rows: rows(offset ?? 0, 1), total: 5000 }))
    store.getState().ensureTaskRange(0, 40)
    await settle()
    store.getState().ensureTaskRange(400, 440)
    store.getState().ensureTaskRange(900, 940)
    // Within 100 ms of the first ask: nothing yet, then the last range asked.
    expect(fake.inputs('tasks:list')).toHaveLength(1)
    await settle(100)
    expect(fake.inputs('tasks:list').map((i) => i.offset)).toEqual([0, 500, 1000])
    expect(Object.keys(store.getState().taskWindows)).toEqual(['0', '1', '2'])
  })

  it('fetches a window once more when it is asked for again while in flight', async () => {
    const { store, fake } = storeOnFakePacer()
    const first = deferred<ListReply>()
    fake.on('tasks:list', () => first.promise)
    store.getState().ensureTaskRange(0, 40)
    store.getState().refreshTasks()
    expect(fake.inputs('tasks:list')).toHaveLength(1)
    expect(store.getState().taskPaging.refetchAfter).toEqual([0])

    fake.on('tasks:list', () => ok({ rows: rows(1, 2), total: 2 }))
    first.resolve(ok({ rows: rows(1, 1), total: 1 }))
    await settle()
    expect(fake.inputs('tasks:list')).toHaveLength(2)
    expect(store.getState().taskPaging).toMatchObject({ inflight: [], refetchAfter: [] })
    expect(store.getState().taskTotal).toBe(2)
  })

  it('shows a failed fetch as the list error, cleared by the next good one', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('tasks:list', () => fail('db_locked'))
    store.getState().ensureTaskRange(0, 40)
    await settle()
    expect(store.getState()).toMatchObject({
      taskListLoaded: true,
      taskListError: { code: 'db_locked' },
    })
    fake.on('tasks:list', () => ok({ rows: [], total: 0 }))
    store.getState().refreshTasks()
    await settle()
    expect(store.getState().taskListError).toBeNull()
  })
})

describe('tasks slice: filters', () => {
  it('a new filter starts over at the top and drops replies to the old one', async () => {
    const { store, fake } = storeOnFakePacer()
    const old = deferred<ListReply>()
    fake.on('tasks:list', () => old.promise)
    store.getState().ensureTaskRange(1000, 1040)
    fake.on('tasks:list', () => ok({ rows: rows(7, 1, { status: 'failed' }), total: 1 }))
    store.getState().setStatusFilter(['failed'])
    expect(store.getState()).toMatchObject({
      taskFilter: { statuses: ['failed'], batchId: null },
      taskQueryEpoch: 1,
      taskListLoaded: false,
      taskPaging: { generation: 1, visible: { start: 0, end: 40 } },
    })
    expect(fake.inputs('tasks:list').at(-1)).toEqual({
      offset: 0,
      limit: 500,
      statuses: ['failed'],
    })
    await settle()
    expect(store.getState().taskWindows[0]!.map((r) => r.id)).toEqual([7])

    old.resolve(ok({ rows: rows(1, 500), total: 9000 }))
    await settle()
    expect(store.getState().taskTotal).toBe(1)
    expect(Object.keys(store.getState().taskWindows)).toEqual(['0'])
  })

  it('toggles a status in and out, and filters by batch', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('tasks:list', () => ok({ rows: [], total: 0 }))
    store.getState().toggleStatusFilter('queued')
    store.getState().toggleStatusFilter('running')
    expect(store.getState().taskFilter.statuses).toEqual(['queued', 'running'])
    store.getState().toggleStatusFilter('queued')
    expect(store.getState().taskFilter.statuses).toEqual(['running'])
    store.getState().setBatchFilter('b2')
    expect(fake.inputs('tasks:list').at(-1)).toEqual({
      offset: 0,
      limit: 500,
      statuses: ['running'],
      batchId: 'b2',
    })
    expect(store.getState().taskQueryEpoch).toBe(4)
  })
})

describe('tasks slice: tasks:changed', () => {
  async function loaded(statuses: TaskRow['status'][] = []) {
    const setup = storeOnFakePacer()
    const { store, fake } = setup
    fake.on('batches:list', () => ok([batch('b1', 1, { queued: 2 })]))
    fake.on('tasks:list', () => ok({ rows: rows(1, 2), total: 2 }))
    await store.getState().loadBatches()
    if (statuses.length) store.getState().setStatusFilter(statuses)
    else store.getState().ensureTaskRange(0, 40)
    await settle(1000)
    fake.calls.length = 0
    return setup
  }

  it('merges changed rows in place and updates the batches, without a refetch', async () => {
    const { store, fake } = await loaded()
    store.getState().applyTasksChanged({
      batches: [batch('b1', 1, { queued: 1, running: 1 })],
      tasks: [task(1, { status: 'running' })],
      truncated: false,
    })
    await settle(1000)
    expect(store.getState().taskWindows[0]!.map((r) => r.status)).toEqual(['running', 'queued'])
    expect(store.getState().batches[0]!.counts).toMatchObject({ queued: 1, running: 1 })
    expect(fake.calls).toEqual([])
  })

  it('refetches what is in view when rows leave the filter, the count moves or it was truncated', async () => {
    const { store, fake } = await loaded(['queued'])
    store.getState().applyTasksChanged({
      batches: [batch('b1', 1, { queued: 1, running: 1 })],
      tasks: [task(1, { status: 'running' })],
      truncated: false,
    })
    await settle()
    expect(fake.inputs('tasks:list')).toEqual([{ offset: 0, limit: 500, statuses: ['queued'] }])

    // New tasks: the total moved, though no loaded row changed.
    store.getState().applyTasksChanged({
      batches: [batch('b1', 1, { queued: 5, running: 1 })],
      tasks: [],
      truncated: false,
    })
    await settle(750)
    expect(fake.inputs('tasks:list')).toHaveLength(2)

    store.getState().applyTasksChanged({ batches: [], tasks: [], truncated: true })
    await settle(750)
    expect(fake.inputs('tasks:list')).toHaveLength(3)
  })

  it('ignores rows of other batches when filtered on one', async () => {
    const { store } = await loaded()
    store.getState().setBatchFilter('b1')
    await settle(1000)
    const before = store.getState().taskWindows
    store.getState().applyTasksChanged({
      batches: [],
      tasks: [task(1, { batchId: 'b9', status: 'failed' })],
      truncated: false,
    })
    expect(store.getState().taskWindows).toBe(before)
  })
})

describe('tasks slice: commands', () => {
  it('enqueue and retry refresh the table when they succeed, not when refused', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('tasks:list', () => ok({ rows: [], total: 0 }))
    fake.on('tasks:enqueue', () => ok({ batchId: 'b1', enqueued: 1 }))
    fake.on('tasks:retry', () => fail('nothing_to_retry'))
    expect(await store.getState().enqueueTask({ type: 't', payload: {} })).toEqual(
      ok({ batchId: 'b1', enqueued: 1 }),
    )
    expect(fake.inputs('tasks:enqueue')).toEqual([{ tasks: [{ type: 't', payload: {} }] }])
    expect(fake.inputs('tasks:list')).toHaveLength(1)
    await settle(1000)
    expect(await store.getState().retryTasks({ taskIds: [3] })).toEqual(fail('nothing_to_retry'))
    await settle(1000)
    expect(fake.inputs('tasks:retry')).toEqual([{ taskIds: [3] }])
    expect(fake.inputs('tasks:list')).toHaveLength(1)
  })
})
