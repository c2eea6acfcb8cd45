// The console when things go wrong: a payload JSON cannot carry, the network dropping under the
// page, `pacer serve` stopping and coming back with a new token. Real Chromium, a real
// `pacer serve` on a temporary database, and between them a small HTTP relay that can cut every
// connection and come back on the same port (a dropped network, without restarting the server).
import { mkdirSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureConsoleBuilt, launchChromium } from '../helpers/browser'
import { ROOT, query, startPacer, tempDir, until } from '../helpers/cli'

const SHOTS = join(ROOT, 'test-results', 'screenshots')

let server: ReturnType<typeof startPacer>
let restarted: ReturnType<typeof startPacer> | null = null
let relay: Relay
let browser: Browser
let page: Page
let serverUrl: URL
let db: string
const pageErrors: string[] = []

/**
 * Forwards HTTP to the server, rewriting Host and Origin (the server accepts only its own), so the
 * page can be served through it. `drop()` closes the listener and every open connection, SSE
 * included; `restore()` listens again on the same port.
 */
interface Relay {
  port: number
  drop(): Promise<void>
  restore(): Promise<void>
}

async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<Socket>()
  let listener: Server | null = null
  let port = 0
  const listen = async (): Promise<void> => {
    const s = createServer((req, res) => {
      const headers = { ...req.headers, host: target.host }
      if (headers.origin) headers.origin = target.origin
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      upstream.on('error', () => res.destroy())
      req.pipe(upstream)
    })
    s.on('connection', (socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
    })
    await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve))
    port = (s.address() as { port: number }).port
    listener = s
  }
  await listen()
  return {
    get port() {
      return port
    },
    drop: async () => {
      const s = listener
      listener = null
      if (!s) return
      const closed = new Promise<void>((resolve) => s.close(() => resolve()))
      for (const socket of sockets) socket.destroy()
      await closed
    },
    restore: listen,
  }
}

async function api<T>(channel: string, input: unknown = {}): Promise<T> {
  const res = await fetch(`${serverUrl.origin}/api/commands/${channel}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${serverUrl.searchParams.get('token')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(input),
  })
  const reply = (await res.json()) as { ok: boolean; value?: T; error?: unknown }
  if (!reply.ok) throw new Error(`${channel}: ${JSON.stringify(reply.error)}`)
  return reply.value as T
}

async function serve(port: number): Promise<{ proc: ReturnType<typeof startPacer>; url: URL }> {
  const proc = startPacer(['serve', '--db', db, '--port', String(port)])
  const url = await until(() => /Pacer console: (\S+)/.exec(proc.output().stdout)?.[1], 30_000)
  return { proc, url: new URL(url) }
}

async function stop(proc: ReturnType<typeof startPacer>): Promise<void> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGINT')
  await proc.done
}

const connection = (p: Page) => p.getByTestId('transport').getAttribute('data-connection')

async function openConsole(url: string): Promise<Page> {
  const p = await browser.newPage({ viewport: { width: 1440, height: 900 } })
  p.on('pageerror', (err) => pageErrors.push(err.message))
  await p.goto(url)
  await p.getByTestId('nav-queue').waitFor()
  await until(async () => (await connection(p)) === 'open', 10_000)
  return p
}

beforeAll(async () => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  db = join(tempDir('pacer-e2e-resilience-'), 'pacer.db')
  const started = await serve(0)
  server = started.proc
  serverUrl = started.url
  relay = await startRelay(serverUrl)
  browser = await launchChromium()
  page = await openConsole(`http://127.0.0.1:${relay.port}/${serverUrl.search}`)
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await relay?.drop()
  if (server) await stop(server)
  if (restarted) await stop(restarted)
})

describe('the add-task form', () => {
  it('refuses a payload JSON cannot carry (1e400 parses to Infinity), naming its path', async () => {
    await page.getByTestId('add-task-toggle').click()
    await page.getByTestId('task-type').fill('priced')
    await page
      .getByTestId('task-payload')
      .fill('{"items": [{"price": 1}, {"price": 2}, {"price": 3}, {"price": 1e400}]}')
    await expect(page.getByTestId('payload-json-error').textContent()).resolves.toContain(
      'payload.items[3].price is Infinity, which is not JSON',
    )
    await expect(page.getByTestId('task-submit').isDisabled()).resolves.toBe(true)
    // A submit forced past the disabled button (a script, an extension) is refused by the form
    // itself, with the same words, and sends nothing.
    await page
      .getByTestId('add-task-form')
      .evaluate((form) => (form as unknown as { requestSubmit(): void }).requestSubmit())
    const refused = page.getByTestId('add-task-form').locator('.inline-error')
    await refused.waitFor({ timeout: 5_000 })
    await expect(refused.textContent()).resolves.toContain('payload.items[3].price is Infinity')
    await page.screenshot({ path: join(SHOTS, 'resilience-payload.png') })
    expect(await api<unknown[]>('batches:list')).toEqual([])

    await page.getByTestId('task-payload').fill('{"items": [{"price": 1e300}]}')
    await expect(page.getByTestId('task-submit').isDisabled()).resolves.toBe(false)
    await page.getByTestId('task-submit').click()
    await until(async () => (await api<unknown[]>('batches:list')).length === 1, 10_000)
  })
})

describe('losing the server', () => {
  it('a dropped network shows a banner and a red dot; back, every view reloads', async () => {
    await until(
      () => query(db, `SELECT 1 FROM tasks WHERE status IN ('queued','running')`).length === 0,
    )
    await until(async () => (await page.getByTestId('header-cost').textContent()) !== '—', 10_000)
    const costBefore = await page.getByTestId('header-cost').textContent()

    await relay.drop()
    const banner = page.getByTestId('connection-banner')
    await banner.waitFor({ timeout: 10_000 })
    await expect(banner.textContent()).resolves.toContain(
      'Disconnected from the Pacer server — retrying…',
    )
    expect(await connection(page)).toBe('reconnecting')
    await expect(page.getByTestId('transport-dot').getAttribute('class')).resolves.toContain(
      'dot-off',
    )
    await page.screenshot({ path: join(SHOTS, 'resilience-disconnected.png') })

    // While the page cannot hear it, a batch runs to the end: no event about it will ever reach
    // the page, so only a reload can show it.
    const content = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify({ type: 'offline', payload: { i } }),
    ).join('\n')
    const { batchId } = await api<{ batchId: string }>('batches:import', {
      fileName: 'offline.jsonl',
      content,
    })
    await until(
      () => query(db, `SELECT 1 FROM tasks WHERE status IN ('queued','running')`).length === 0,
      30_000,
    )
    // Let the engine's last pushes (samples, ledger totals) go out to nobody.
    await new Promise((r) => setTimeout(r, 2500))
    expect(await banner.count()).toBe(1)

    await relay.restore()
    await until(async () => (await connection(page)) === 'open', 20_000)
    expect(await banner.count()).toBe(0)
    await expect(page.getByTestId('transport-dot').getAttribute('class')).resolves.toContain(
      'dot-on',
    )
    await page.getByTestId('nav-queue').click()
    const row = page.locator(`[data-testid="batch-row"][data-batch-id="${batchId}"]`)
    await until(async () => (await row.count()) === 1, 10_000)
    await until(async () => /12 \/ 12/.test((await row.textContent()) ?? ''), 10_000)
    await until(async () => (await page.getByTestId('header-cost').textContent()) !== costBefore)
    await expect(page.getByTestId('header-limit').textContent()).resolves.toContain('sim:sim-small')
  })

  it('a refused slider change stops showing its error once another change goes through', async () => {
    await page.getByTestId('nav-concurrency').click()
    await page.getByTestId('slider-max').fill('12')
    await until(
      async () => (await page.getByTestId('slider-max').getAttribute('data-applied')) === '12',
    )
    await page.getByTestId('slider-min').fill('32')
    const error = page.getByTestId('slider-min-error')
    await error.waitFor({ timeout: 10_000 })
    await expect(error.textContent()).resolves.toMatch(/max/)
    await page.getByTestId('slider-max').fill('40')
    await until(
      async () => (await page.getByTestId('slider-max').getAttribute('data-applied')) === '40',
    )
    await until(async () => (await error.count()) === 0, 5_000)
  })

  it('stopping pacer serve shows the banner; a restart with a new token says to open its URL', async () => {
    const direct = await openConsole(serverUrl.href)
    // Opened on an idle engine, which sends no samples: the chart still starts from the
    // scheduler's current state instead of being blank.
    await direct.getByTestId('nav-concurrency').click()
    const chart = direct.getByTestId('concurrency-chart-sim:sim-small')
    await chart.waitFor()
    await until(async () => Number(await chart.getAttribute('data-points')) >= 1, 5_000)
    expect(await chart.getAttribute('data-samples')).toBe('0')
    await expect(direct.getByTestId('header-limit').textContent()).resolves.toMatch(
      /^Limit sim:sim-small\d+$/,
    )
    const port = Number(serverUrl.port)
    await stop(server)
    for (const p of [page, direct]) {
      await p.getByTestId('connection-banner').waitFor({ timeout: 10_000 })
      expect(await connection(p)).toBe('reconnecting')
    }
    await direct.screenshot({ path: join(SHOTS, 'resilience-server-stopped.png') })

    const again = await serve(port)
    restarted = again.proc
    expect(again.url.searchParams.get('token')).not.toBe(serverUrl.searchParams.get('token'))
    for (const p of [direct, page]) {
      await until(async () => (await connection(p)) === 'unauthorized', 30_000)
      await expect(p.getByTestId('connection-banner').textContent()).resolves.toContain(
        'The server restarted: open the new URL it printed',
      )
    }
    await direct.screenshot({ path: join(SHOTS, 'resilience-new-token.png') })
    await direct.close()
  })

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([])
  })
})
