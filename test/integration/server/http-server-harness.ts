// What the headless transport's tests share: a renderer folder on disk (and a file beside it that
// must never be served), a real server on a free loopback port over a fake engine, and requests
// to it: commands, raw requests fetch would normalize, Server-Sent Events read until a count.
import { request } from 'node:http'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { startHttpServer, type HttpServerHandle } from '../../../src/main/server/http-server'
import { createFakeEngine, type FakeEngine } from '../../helpers/fake-engine'

// Live bindings: the test files read them after start().
export let dir: string
export let rendererDir: string
export let engine: FakeEngine
export let server: HttpServerHandle
export let base: string

export const INDEX_HTML = '<!doctype html><title>Pacer</title><div id="root"></div>'
export const SECRET = 'this file is outside the renderer folder'

/** Writes the renderer folder before the file's tests, and closes each test's server after it. */
export function useHttpServer(): void {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pacer-http-'))
    rendererDir = join(dir, 'renderer')
    await mkdir(join(rendererDir, 'assets'), { recursive: true })
    await writeFile(join(rendererDir, 'index.html'), INDEX_HTML)
    await writeFile(join(rendererDir, 'assets', 'app.js'), 'console.log("pacer")')
    await writeFile(join(rendererDir, 'assets', 'app.css'), 'body{}')
    await writeFile(join(dir, 'secret.txt'), SECRET)
    await writeFile(join(dir, 'icon.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
  })

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  afterEach(async () => {
    await server?.close()
  })
}

async function serve(extra: Partial<Parameters<typeof startHttpServer>[0]> = {}) {
  server = await startHttpServer({
    handlers: engine.handlers,
    subscribe: engine.subscribe,
    exportCsv: engine.exportCsv,
    exportResults: engine.exportResults,
    rendererDir,
    ...extra,
  })
  base = `http://127.0.0.1:${server.port}`
}

/** A server over a new fake engine. */
export async function start(extra: Partial<Parameters<typeof startHttpServer>[0]> = {}) {
  engine = createFakeEngine()
  await serve(extra)
}

/** The server started again over the same engine, which the test changed meanwhile. */
export async function restart() {
  await server.close()
  await serve()
}

export function post(channel: string, body: unknown, token: string | null = server.token) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (token !== null) headers.Authorization = `Bearer ${token}`
  return fetch(`${base}/api/commands/${channel}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** A raw request: exact path bytes and any Host header, which fetch would normalize or refuse. */
export function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, path, method: 'GET', headers },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** Reads an SSE stream until `count` events arrived; returns them parsed. */
export async function readEvents(
  response: Response,
  count: number,
  onOpen?: () => void,
): Promise<{ event: string; data: unknown }[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const events: { event: string; data: unknown }[] = []
  let buffer = ''
  onOpen?.()
  while (events.length < count) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += value
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (event && data) events.push({ event, data: JSON.parse(data) })
      else if (block.startsWith(':')) events.push({ event: 'comment', data: block })
    }
  }
  await reader.cancel()
  return events
}
