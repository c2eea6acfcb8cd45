import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import {
  CommandFailure,
  dispatchCommand,
  exportFileName,
  httpStatusFor,
  toCommandError,
} from '../../../src/main/server/commands'
import { isLoopbackHost } from '../../../src/shared/contract'
import { contentTypeFor, lookupStatic } from '../../../src/main/server/static-files'
import { createFakeEngine } from './fake-engine'

describe('toCommandError', () => {
  it.each<[string, unknown, object]>([
    [
      'a domain error keeps code and field',
      new CommandFailure('not_found', 'no batch b1', 'batchId'),
      { code: 'not_found', message: 'no batch b1', field: 'batchId' },
    ],
    [
      'a Node error keeps its errno code',
      Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }),
      { code: 'EACCES', message: 'EACCES: permission denied' },
    ],
    ['a plain Error becomes internal', new Error('boom'), { code: 'internal', message: 'boom' }],
    [
      'a numeric code is not trusted',
      Object.assign(new Error('x'), { code: 42 }),
      { code: 'internal', message: 'x' },
    ],
    [
      'a code with spaces is not trusted',
      Object.assign(new Error('x'), { code: 'drop table' }),
      { code: 'internal', message: 'x' },
    ],
    ['a thrown string', 'just a string', { code: 'internal', message: 'just a string' }],
    ['null', null, { code: 'internal', message: 'null' }],
    [
      'an error without a message',
      Object.assign(new Error(''), { code: 'busy' }),
      { code: 'busy', message: 'unexpected error' },
    ],
  ])('%s', (_name, err, expected) => {
    expect(toCommandError(err)).toEqual(expected)
  })

  it('never includes the stack', () => {
    const err = new Error('boom')
    expect(JSON.stringify(toCommandError(err))).not.toContain('commands.test.ts')
  })

  it('caps very long messages', () => {
    expect(toCommandError(new Error('x'.repeat(10_000))).message).toHaveLength(2000)
  })

  it('maps a ZodError thrown by a handler to invalid_input with the field', () => {
    const parsed = z.object({ a: z.object({ b: z.number() }) }).safeParse({ a: { b: 'no' } })
    expect(parsed.success).toBe(false)
    if (!parsed.success) {
      expect(toCommandError(parsed.error)).toMatchObject({ code: 'invalid_input', field: 'a.b' })
    }
  })
})

describe('dispatchCommand', () => {
  it('answers unknown channels, including prototype names, as unknown_command', async () => {
    const engine = createFakeEngine()
    for (const channel of ['nope', '__proto__', 'constructor', 'toString']) {
      expect(await dispatchCommand(engine.handlers, channel, {})).toMatchObject({
        ok: false,
        error: { code: 'unknown_command' },
      })
    }
  })

  it('reports internal errors to its logger, and only those', async () => {
    const engine = createFakeEngine()
    const log = vi.fn()
    await dispatchCommand(engine.handlers, 'scheduler:get', {}, log)
    await dispatchCommand(engine.handlers, 'batches:pause', { batchId: 'x' }, log)
    expect(log).toHaveBeenCalledTimes(1)
    expect(log.mock.calls[0]?.[0]).toBe('scheduler:get')
  })
})

describe('httpStatusFor', () => {
  it.each([
    [{ ok: true as const, value: 1 }, 200],
    [{ ok: false as const, error: { code: 'invalid_input', message: '' } }, 400],
    [{ ok: false as const, error: { code: 'unauthorized', message: '' } }, 401],
    [{ ok: false as const, error: { code: 'forbidden', message: '' } }, 403],
    [{ ok: false as const, error: { code: 'unknown_command', message: '' } }, 404],
    [{ ok: false as const, error: { code: 'payload_too_large', message: '' } }, 413],
    [
      { ok: false as const, error: { code: 'key_reused_with_different_payload', message: '' } },
      422,
    ],
    [{ ok: false as const, error: { code: 'internal', message: '' } }, 500],
  ])('%j -> %i', (reply, status) => {
    expect(httpStatusFor(reply)).toBe(status)
  })
})

describe('exportFileName', () => {
  it('uses the local date, zero-padded', () => {
    expect(exportFileName('events', new Date(2025, 2, 4, 23, 59))).toBe('pacer-events-20250304.csv')
    expect(exportFileName('summary', new Date(2024, 11, 31))).toBe('pacer-summary-20241231.csv')
  })
})

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['LOCALHOST', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.0.10', false],
    ['10.0.0.1', false],
    ['localhost.example.com', false],
    ['127.0.0.1.nip.io', false],
    ['', false],
  ])('%s -> %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected)
  })
})

describe('lookupStatic', () => {
  let dir: string
  let root: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pacer-static-'))
    root = join(dir, 'renderer')
    await mkdir(join(root, 'assets'), { recursive: true })
    await writeFile(join(root, 'index.html'), '<!doctype html>')
    await writeFile(join(root, 'assets', 'a.js'), '1')
    await writeFile(join(dir, 'secret.txt'), 'secret')
    await symlink(join(dir, 'secret.txt'), join(root, 'assets', 'escape.txt'))
    await symlink(dir, join(root, 'up'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('maps / to index.html and finds assets', async () => {
    expect(await lookupStatic(root, '/')).toMatchObject({
      kind: 'file',
      contentType: 'text/html; charset=utf-8',
    })
    expect(await lookupStatic(root, '/assets/a.js')).toMatchObject({ kind: 'file', size: 1 })
  })

  it.each(['/assets/escape.txt', '/up/secret.txt', '/up/renderer/index.html/../../secret.txt'])(
    'does not follow a symlink out of the folder: %s',
    async (path) => {
      expect((await lookupStatic(root, path)).kind).toBe('not_found')
    },
  )

  it.each(['/%E0%A4%A', '/a%00b', '/..%5c..%5csecret.txt'])(
    'refuses the malformed path %s',
    async (path) => {
      expect((await lookupStatic(root, path)).kind).toBe('bad_request')
    },
  )

  it('does not serve directories', async () => {
    expect((await lookupStatic(root, '/assets')).kind).toBe('not_found')
    expect((await lookupStatic(root, '/assets/')).kind).toBe('not_found')
  })

  it('knows the content types the console uses', () => {
    expect(contentTypeFor('x.js')).toBe('text/javascript; charset=utf-8')
    expect(contentTypeFor('x.CSS')).toBe('text/css; charset=utf-8')
    expect(contentTypeFor('x.woff2')).toBe('font/woff2')
    expect(contentTypeFor('x.unknown')).toBe('application/octet-stream')
  })
})
