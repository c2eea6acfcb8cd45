import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { storeOnFakePacer } from './fake-pacer'

beforeEach(() => {
  vi.useFakeTimers()
  vi.spyOn(console, 'error').mockImplementation(() => undefined)
})
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('ui slice', () => {
  it('says where an error is, and counts a repeat instead of stacking it', () => {
    const { store } = storeOnFakePacer()
    store.getState().reportError('Could not save', {
      code: 'invalid_input',
      message: 'must be positive',
      field: 'resultTtlMs',
    })
    store.getState().reportError('Could not save', {
      code: 'invalid_input',
      message: 'must be positive',
      field: 'resultTtlMs',
    })
    expect(store.getState().toasts).toMatchObject([
      {
        kind: 'error',
        title: 'Could not save',
        message: 'must be positive (resultTtlMs)',
        repeats: 2,
      },
    ])
    expect(console.error).toHaveBeenCalledWith(
      '[pacer] Could not save: must be positive (resultTtlMs)',
    )
  })

  it('keeps the five newest toasts', () => {
    const { store } = storeOnFakePacer()
    for (let i = 0; i < 7; i++) store.getState().notify(`note ${i}`, 'm')
    expect(store.getState().toasts.map((t) => t.title)).toEqual([
      'note 2',
      'note 3',
      'note 4',
      'note 5',
      'note 6',
    ])
  })

  it('dismisses an info toast after 5 s and an error after 12 s, or when asked', () => {
    const { store } = storeOnFakePacer()
    store.getState().notify('Imported', 'a.jsonl')
    store.getState().reportError('Failed', 'boom')
    store.getState().reportError('Also failed', 'bang')
    vi.advanceTimersByTime(5000)
    expect(store.getState().toasts.map((t) => t.title)).toEqual(['Failed', 'Also failed'])
    store.getState().dismissToast(store.getState().toasts[1]!.id)
    expect(store.getState().toasts.map((t) => t.title)).toEqual(['Failed'])
    vi.advanceTimersByTime(7000)
    expect(store.getState().toasts).toEqual([])
  })

  it('sets the view, the transport and the connection', () => {
    const { store } = storeOnFakePacer()
    expect(store.getState()).toMatchObject({
      view: 'queue',
      transport: null,
      connection: 'connecting',
    })
    store.getState().setView('spend')
    store.getState().setTransport('http')
    store.getState().setConnection('reconnecting')
    expect(store.getState()).toMatchObject({
      view: 'spend',
      transport: 'http',
      connection: 'reconnecting',
    })
  })
})
