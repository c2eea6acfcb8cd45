import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentTypeFor, lookupStatic } from '../../../src/main/server/static-files'

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
