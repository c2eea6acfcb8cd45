import { describe, expect, it, vi } from 'vitest'

vi.mock('electron', () => ({}))

import {
  bindIpc,
  createTrustedSenderCheck,
  forwardEvents,
  type IpcInvokeEventLike,
  type IpcMainLike,
} from '../../../src/main/desktop/ipc'
import { createAppUrlMatcher } from '../../../src/main/desktop/app-url'
import { COMMANDS, EVENTS, type Reply } from '../../../src/shared/contract'
import { createFakeEngine } from '../../helpers/fake-engine'

/** ipcMain as far as bindIpc can tell: records handlers and lets the test invoke them. */
class FakeIpcMain implements IpcMainLike {
  handlers = new Map<string, (event: IpcInvokeEventLike, ...args: unknown[]) => unknown>()
  handle(channel: string, listener: (event: IpcInvokeEventLike, ...args: unknown[]) => unknown) {
    // Electron throws on a second handler for a channel; so does this fake.
    if (this.handlers.has(channel)) throw new Error(`second handler for ${channel}`)
    this.handlers.set(channel, listener)
  }
  removeHandler(channel: string) {
    this.handlers.delete(channel)
  }
  async invoke(
    channel: string,
    event: IpcInvokeEventLike,
    input: unknown,
  ): Promise<Reply<unknown>> {
    const handler = this.handlers.get(channel)
    if (!handler) throw new Error(`No handler registered for '${channel}'`)
    return (await handler(event, input)) as Reply<unknown>
  }
}

const INDEX = 'file:///opt/pacer/out/renderer/index.html'
const isAppUrl = createAppUrlMatcher({ rendererDir: '/opt/pacer/out/renderer' })
const trusted: IpcInvokeEventLike = { senderFrame: { url: INDEX, parent: null } }

function bound() {
  const ipcMain = new FakeIpcMain()
  const engine = createFakeEngine()
  const dispose = bindIpc(ipcMain, engine.handlers, {
    isTrustedSender: createTrustedSenderCheck(isAppUrl),
  })
  return { ipcMain, engine, dispose }
}

describe('bindIpc', () => {
  it('registers exactly one handler per command of the contract', () => {
    const { ipcMain } = bound()
    expect([...ipcMain.handlers.keys()].sort()).toEqual([...COMMANDS].sort())
  })

  it('runs a valid command from the console and answers an ok Reply', async () => {
    const { ipcMain, engine } = bound()
    const reply = await ipcMain.invoke('tasks:enqueue', trusted, {
      tasks: [{ type: 'summarize', payload: { doc: 1 } }],
    })
    expect(reply).toEqual({ ok: true, value: { batchId: 'batch-1', enqueued: 1 } })
    expect(engine.calls).toHaveLength(1)
  })

  it.each([
    ['tasks:enqueue', { tasks: [] }, 'tasks'],
    ['tasks:enqueue', { tasks: [{ type: 'x', payload: {}, steps: 0 }] }, 'tasks[0].steps'],
    ['tasks:enqueue', { tasks: [{ type: 'x', payload: {}, surprise: 1 }] }, 'tasks[0]'],
    ['batches:pause', { batchId: '' }, 'batchId'],
    ['scheduler:set', { partition: 'sim:m', params: { decrease: 1.5 } }, 'params.decrease'],
    ['ledger:export', { kind: 'everything' }, 'kind'],
    ['secrets:set', { provider: 'mystery', apiKey: 'k' }, 'provider'],
  ])('refuses invalid input to %s, naming the field %s', async (channel, input, field) => {
    const { ipcMain, engine } = bound()
    const reply = await ipcMain.invoke(channel, trusted, input)
    expect(reply.ok).toBe(false)
    if (!reply.ok) {
      expect(reply.error.code).toBe('invalid_input')
      expect(reply.error.field).toBe(field)
      expect(reply.error.message).toContain(field)
    }
    expect(engine.calls).toEqual([])
  })

  it('treats a missing input as an empty object', async () => {
    const { ipcMain } = bound()
    expect(await ipcMain.invoke('batches:list', trusted, undefined)).toEqual({
      ok: true,
      value: [],
    })
  })

  it.each<[string, IpcInvokeEventLike]>([
    ['a destroyed frame', { senderFrame: null }],
    ['a subframe of the console', { senderFrame: { url: INDEX, parent: { url: INDEX } } }],
    ['a web page', { senderFrame: { url: 'https://evil.example/', parent: null } }],
    [
      'another local file',
      { senderFrame: { url: 'file:///home/op/Downloads/x.html', parent: null } },
    ],
    [
      'a look-alike folder',
      { senderFrame: { url: 'file:///opt/pacer/out/renderer2/index.html', parent: null } },
    ],
    [
      'a dev server that is not configured',
      { senderFrame: { url: 'http://localhost:5173/', parent: null } },
    ],
    ['about:blank', { senderFrame: { url: 'about:blank', parent: null } }],
  ])('answers forbidden to %s and never reaches the engine', async (_name, event) => {
    const { ipcMain, engine } = bound()
    const reply = await ipcMain.invoke('tasks:enqueue', event, {
      tasks: [{ type: 'summarize', payload: {} }],
    })
    expect(reply).toEqual({ ok: false, error: expect.objectContaining({ code: 'forbidden' }) })
    expect(engine.calls).toEqual([])
  })

  it('turns a thrown domain error into data, keeping code and field', async () => {
    const { ipcMain } = bound()
    expect(await ipcMain.invoke('batches:pause', trusted, { batchId: 'b9' })).toEqual({
      ok: false,
      error: { code: 'batch_not_found', message: 'no batch b9', field: 'batchId' },
    })
  })

  it('turns an unexpected error into code internal without its stack', async () => {
    const { ipcMain } = bound()
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const reply = await ipcMain.invoke('scheduler:get', trusted, {})
    expect(reply).toEqual({
      ok: false,
      error: { code: 'internal', message: 'database is on fire' },
    })
    expect(JSON.stringify(reply)).not.toContain('fake-engine.ts')
    // The stack is for main's log, not for the renderer.
    expect(log).toHaveBeenCalled()
    log.mockRestore()
  })

  it('does not trust error codes that are not identifiers', async () => {
    const ipcMain = new FakeIpcMain()
    const engine = createFakeEngine()
    engine.handlers['batches:list'] = () => {
      throw Object.assign(new Error('odd'), { code: 'has spaces <b>', field: 42 })
    }
    bindIpc(ipcMain, engine.handlers, { isTrustedSender: () => true })
    vi.spyOn(console, 'error').mockImplementation(() => undefined)
    expect(await ipcMain.invoke('batches:list', trusted, {})).toEqual({
      ok: false,
      error: { code: 'internal', message: 'odd' },
    })
    vi.mocked(console.error).mockRestore()
  })

  it('removes its handlers when disposed', () => {
    const { ipcMain, dispose } = bound()
    dispose()
    expect(ipcMain.handlers.size).toBe(0)
  })
})

describe('forwardEvents', () => {
  it('sends every engine event to the window until unsubscribed', () => {
    const engine = createFakeEngine()
    const sent: [string, unknown][] = []
    const contents = {
      send: (c: string, p: unknown) => sent.push([c, p]),
      isDestroyed: () => false,
    }
    const stop = forwardEvents(engine.subscribe, contents)
    expect(engine.listenerCount()).toBe(EVENTS.length)
    const batches = { batches: [], tasks: [], truncated: false }
    engine.emit('tasks:changed', batches)
    expect(sent).toEqual([['tasks:changed', batches]])
    stop()
    expect(engine.listenerCount()).toBe(0)
    engine.emit('tasks:changed', batches)
    expect(sent).toHaveLength(1)
  })

  it('drops events for a destroyed window and survives a send that throws', () => {
    const engine = createFakeEngine()
    let destroyed = true
    const contents = {
      send: vi.fn(() => {
        throw new Error('An object could not be cloned')
      }),
      isDestroyed: () => destroyed,
    }
    forwardEvents(engine.subscribe, contents)
    const payload = { batches: [], tasks: [], truncated: false }
    engine.emit('tasks:changed', payload)
    expect(contents.send).not.toHaveBeenCalled()
    destroyed = false
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    expect(() => engine.emit('tasks:changed', payload)).not.toThrow()
    expect(log).toHaveBeenCalled()
    log.mockRestore()
  })
})
