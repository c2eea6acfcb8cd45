// The task detail drawer's state on a scripted engine: opening a row loads its detail, a reply
// for a row no longer open is dropped, and a change to the open task reads it again.
import { describe, expect, it } from 'vitest'
import type { TaskDetailView } from '../../../../src/shared/contract'
import { batch, deferred, ok, storeOnFakePacer, task } from './fake-pacer'

function detail(taskId: number, text: string | null): TaskDetailView {
  return {
    answer: {
      batchId: 'b1',
      line: taskId,
      taskId,
      type: 't',
      key: null,
      status: text === null ? 'running' : 'succeeded',
      origin: text === null ? null : 'executed',
      text,
      finishReason: text === null ? null : 'stop',
      truncated: false,
      message: null,
      steps: 1,
      inputTokens: 0,
      outputTokens: 0,
      costMicros: null,
      savedMicros: null,
      error: null,
    },
    input: {
      type: 't',
      payload: '{}',
      params: null,
      steps: 1,
      provider: 'sim',
      model: 'sim-small',
      messages: [{ role: 'user', content: 'Task t: {}', fields: null }],
      agent: null,
    },
    journal: [],
    ledger: [],
    log: [],
  }
}

const settle = () => new Promise((r) => setTimeout(r, 0))

describe('task detail slice', () => {
  it('opens a task, drops a late reply for another, closes', async () => {
    const { store, fake } = storeOnFakePacer()
    const slow = deferred<ReturnType<typeof ok<TaskDetailView>>>()
    fake.on('tasks:get', ({ taskId }) => (taskId === 1 ? slow.promise : ok(detail(2, 'two'))))
    store.getState().openTask(1)
    store.getState().openTask(2)
    await settle()
    expect(store.getState().taskDetail?.answer.text).toBe('two')
    slow.resolve(ok(detail(1, 'one')))
    await settle()
    expect(store.getState().taskDetail?.answer.taskId).toBe(2)
    store.getState().closeTask()
    expect(store.getState()).toMatchObject({ openTaskId: null, taskDetail: null })
  })

  it('reads the open task again when tasks:changed carries it', async () => {
    const { store, fake } = storeOnFakePacer()
    let text: string | null = null
    fake.on('tasks:get', ({ taskId }) => ok(detail(taskId, text)))
    store.getState().openTask(5)
    await settle()
    expect(store.getState().taskDetail?.answer.text).toBeNull()
    text = 'the answer'
    store.getState().applyTasksChanged({
      batches: [batch('b1', 1, { succeeded: 1 })],
      tasks: [task(6, { status: 'succeeded' })],
      truncated: false,
    })
    await settle()
    expect(fake.inputs('tasks:get')).toHaveLength(1)
    store.getState().applyTasksChanged({
      batches: [batch('b1', 1, { succeeded: 2 })],
      tasks: [task(5, { status: 'succeeded' })],
      truncated: false,
    })
    await settle()
    expect(store.getState().taskDetail?.answer.text).toBe('the answer')
  })

  it('exports the batch of the open task through the api', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('results:export', () => ok({ path: '/tmp/a.jsonl', rows: 3 }))
    expect(await store.getState().exportResults('b1', 'jsonl')).toEqual(
      ok({ path: '/tmp/a.jsonl', rows: 3 }),
    )
    expect(fake.inputs('results:export')).toEqual([{ batchId: 'b1', format: 'jsonl' }])
  })
})
