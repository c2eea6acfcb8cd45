import { describe, expect, it, vi } from 'vitest'
import { upsertBatches } from '../../../../src/renderer/src/store/batches-slice'
import { batch, fail, ok, storeOnFakePacer } from './fake-pacer'

describe('upsertBatches', () => {
  it('replaces by id and keeps the newest first, ties by id descending', () => {
    const a = batch('a', 1)
    const b = batch('b', 2)
    const c = batch('c', 2)
    const a2 = { ...a, state: 'paused' as const }
    expect(upsertBatches([a, b], [c, a2]).map((x) => [x.id, x.state])).toEqual([
      ['c', 'running'],
      ['b', 'running'],
      ['a', 'paused'],
    ])
  })

  it('answers the same array when nothing changed, so nothing re-renders', () => {
    const list = [batch('a', 1)]
    expect(upsertBatches(list, [])).toBe(list)
  })
})

describe('batches slice', () => {
  it('loads the batch list newest first', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:list', () => ok([batch('old', 1), batch('new', 5)]))
    expect(store.getState().batchesLoaded).toBe(false)
    await store.getState().loadBatches()
    expect(store.getState().batches.map((b) => b.id)).toEqual(['new', 'old'])
    expect(store.getState().batchesLoaded).toBe(true)
  })

  it('reports a failed load as a toast and stays not loaded', async () => {
    const { store, fake } = storeOnFakePacer()
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    fake.on('batches:list', () => fail('db_locked', 'database is locked'))
    await store.getState().loadBatches()
    expect(store.getState().batchesLoaded).toBe(false)
    expect(store.getState().toasts).toMatchObject([
      { kind: 'error', title: 'Could not load batches', message: 'database is locked' },
    ])
    log.mockRestore()
  })

  it('pause, resume and cancel name the batch and put its new state in the list', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:list', () => ok([batch('a', 1), batch('b', 2)]))
    await store.getState().loadBatches()
    fake.on('batches:pause', ({ batchId }) => ok({ ...batch(batchId, 1), state: 'paused' }))
    fake.on('batches:resume', ({ batchId }) => ok({ ...batch(batchId, 1), state: 'running' }))
    fake.on('batches:cancel', ({ batchId }) => ok({ ...batch(batchId, 2), state: 'cancelled' }))

    const paused = await store.getState().pauseBatch('a')
    expect(paused).toMatchObject({ ok: true, value: { id: 'a', state: 'paused' } })
    expect(store.getState().batches.map((b) => [b.id, b.state])).toEqual([
      ['b', 'running'],
      ['a', 'paused'],
    ])
    await store.getState().resumeBatch('a')
    await store.getState().cancelBatch('b')
    expect(store.getState().batches.map((b) => [b.id, b.state])).toEqual([
      ['b', 'cancelled'],
      ['a', 'running'],
    ])
    expect(fake.inputs('batches:pause')).toEqual([{ batchId: 'a' }])
    expect(fake.inputs('batches:resume')).toEqual([{ batchId: 'a' }])
    expect(fake.inputs('batches:cancel')).toEqual([{ batchId: 'b' }])
  })

  it('answers a refused command to its caller and leaves the list alone', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:list', () => ok([batch('a', 1)]))
    await store.getState().loadBatches()
    const before = store.getState().batches
    fake.on('batches:pause', () => fail('invalid_state', 'batch a is done'))
    expect(await store.getState().pauseBatch('a')).toEqual(fail('invalid_state', 'batch a is done'))
    expect(store.getState().batches).toBe(before)
  })

  it('turns a transport that throws into an error reply', async () => {
    const { store, fake } = storeOnFakePacer()
    fake.on('batches:cancel', () => {
      throw new Error('bridge gone')
    })
    expect(await store.getState().cancelBatch('a')).toEqual({
      ok: false,
      error: { code: 'transport_error', message: 'bridge gone' },
    })
  })
})
