// The console when things go wrong: a payload JSON cannot carry, the network dropping under the
// page, `pacer serve` stopping and coming back with a new token. Real Chromium, a real
// `pacer serve` on a temporary database, and between them a small HTTP relay that can cut every
// connection and come back on the same port (a dropped network, without restarting the server).
import { mkdirSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { consoleSession, openConsolePage, serveConsole } from '../helpers/browser'
import { ROOT, query, until, type startPacer } from '../helpers/cli'

const SHOTS = join(ROOT, 'test-results', 'screenshots')

let restarted: ReturnType<typeof startPacer> | null = null
let relay: Relay | undefined

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

async function stop(proc: ReturnType<typeof startPacer>): Promise<void> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGINT')
  await proc.done
}

interface Pushed {
  name: string
  data: unknown
}

/**
 * Every event `pacer serve` pushes, read on a stream of the test's own, straight from the server
 * (not through the relay), so the test sees what goes out while the page cannot hear it.
 */
async function watchEvents(served: { url: URL; token: string }) {
  const seen: Pushed[] = []
  const abort = new AbortController()
  const res = await fetch(`${served.url.origin}/api/events`, {
    headers: { authorization: `Bearer ${served.token}` },
    signal: abort.signal,
  })
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  void (async () => {
    let buffered = ''
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: '', done: true }))
      if (done) return
      buffered += value
      const blocks = buffered.split('\n\n')
      buffered = blocks.pop() ?? ''
      for (const block of blocks) {
        const name = /^event: (.+)$/m.exec(block)?.[1]
        const data = /^data: (.+)$/m.exec(block)?.[1]
        if (name && data) seen.push({ name, data: JSON.parse(data) as unknown })
      }
    }
  })()
  return { seen, close: () => abort.abort() }
}

/** A scheduler:changed with nothing in flight or waiting in any partition: the engine is idle. */
const idle = (e: Pushed) =>
  e.name === 'scheduler:changed' &&
  (e.data as { partitions: { inflight: number; waiting: number }[] }).partitions.every(
    (p) => p.inflight === 0 && p.waiting === 0,
  )

const connection = (p: Page) => p.getByTestId('transport').getAttribute('data-connection')

async function openConsole(url: URL): Promise<Page> {
  const p = await openConsolePage(s.browser, url, s.errors, { pageErrorsOnly: true })
  await until(async () => (await connection(p)) === 'open', 10_000)
  return p
}

// The page is served through the relay; it logs failed loads while the network is down, so only
// its own errors count.
const s = consoleSession({
  name: 'resilience',
  pageErrorsOnly: true,
  pageUrl: async (served) => {
    relay = await startRelay(served.url)
    return new URL(`http://127.0.0.1:${relay.port}/${served.url.search}`)
  },
  teardown: async () => {
    await relay?.drop()
    if (restarted) await stop(restarted)
  },
})

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  await until(async () => (await connection(s.page)) === 'open', 10_000)
})

describe('the add-task form', () => {
  it('refuses a payload JSON cannot carry (1e400 parses to Infinity), naming its path', async () => {
    await s.page.getByTestId('add-task-toggle').click()
    await s.page.getByTestId('task-type').fill('priced')
    await s.page
      .getByTestId('task-payload')
      .fill('{"items": [{"price": 1}, {"price": 2}, {"price": 3}, {"price": 1e400}]}')
    await expect(s.page.getByTestId('payload-json-error').textContent()).resolves.toContain(
      'payload.items[3].price is Infinity, which is not JSON',
    )
    await expect(s.page.getByTestId('task-submit').isDisabled()).resolves.toBe(true)
    // A submit forced past the disabled button (a script, an extension) is refused by the form
    // itself, with the same words, and sends nothing.
    await s.page
      .getByTestId('add-task-form')
      .evaluate((form) => (form as unknown as { requestSubmit(): void }).requestSubmit())
    const refused = s.page.getByTestId('add-task-form').locator('.inline-error')
    await refused.waitFor({ timeout: 5_000 })
    await expect(refused.textContent()).resolves.toContain('payload.items[3].price is Infinity')
    await s.page.screenshot({ path: join(SHOTS, 'resilience-payload.png') })
    expect(await s.served.api<unknown[]>('batches:list')).toEqual([])

    await s.page.getByTestId('task-payload').fill('{"items": [{"price": 1e300}]}')
    await expect(s.page.getByTestId('task-submit').isDisabled()).resolves.toBe(false)
    await s.page.getByTestId('task-submit').click()
    await until(async () => (await s.served.api<unknown[]>('batches:list')).length === 1, 10_000)
  })
})

describe('losing the server', () => {
  it('a dropped network shows a banner and a red dot; back, every view reloads', async () => {
    await until(
      () => query(s.db, `SELECT 1 FROM tasks WHERE status IN ('queued','running')`).length === 0,
    )
    await until(async () => (await s.page.getByTestId('header-cost').textContent()) !== '—', 10_000)
    const costBefore = await s.page.getByTestId('header-cost').textContent()

    await relay!.drop()
    const banner = s.page.getByTestId('connection-banner')
    await banner.waitFor({ timeout: 10_000 })
    await expect(banner.textContent()).resolves.toContain(
      'Disconnected from the Pacer server — retrying…',
    )
    expect(await connection(s.page)).toBe('reconnecting')
    await expect(s.page.getByTestId('transport-dot').getAttribute('class')).resolves.toContain(
      'dot-off',
    )
    await s.page.screenshot({ path: join(SHOTS, 'resilience-disconnected.png') })

    // While the page cannot hear it, a batch runs to the end: no event about it will ever reach
    // the page, so only a reload can show it.
    const events = await watchEvents(s.served)
    const content = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify({ type: 'offline', payload: { i } }),
    ).join('\n')
    const { batchId } = await s.served.api<{ batchId: string }>('batches:import', {
      fileName: 'offline.jsonl',
      content,
    })
    await until(
      () => query(s.db, `SELECT 1 FROM tasks WHERE status IN ('queued','running')`).length === 0,
      30_000,
    )
    // Let the engine's last pushes go out to nobody on the page's side: the idle sample after the
    // batch, and the ledger totals it marks for pushing (at most every 2 s), the batch's included.
    const [{ input }] = query<{ input: number }>(
      s.db,
      'SELECT COALESCE(SUM(input_tokens), 0) AS input FROM ledger',
    ) as [{ input: number }]
    await until(() => {
      const lastIdle = events.seen.findLastIndex(idle)
      return (
        lastIdle >= 0 &&
        events.seen
          .slice(lastIdle)
          .some(
            (e) =>
              e.name === 'ledger:changed' &&
              (e.data as { totals: { inputTokens: number } }).totals.inputTokens === input,
          )
      )
    }, 30_000)
    events.close()
    expect(await banner.count()).toBe(1)

    await relay!.restore()
    await until(async () => (await connection(s.page)) === 'open', 20_000)
    expect(await banner.count()).toBe(0)
    await expect(s.page.getByTestId('transport-dot').getAttribute('class')).resolves.toContain(
      'dot-on',
    )
    await s.page.getByTestId('nav-queue').click()
    const row = s.page.locator(`[data-testid="batch-row"][data-batch-id="${batchId}"]`)
    await until(async () => (await row.count()) === 1, 10_000)
    await until(async () => /12 \/ 12/.test((await row.textContent()) ?? ''), 10_000)
    await until(async () => (await s.page.getByTestId('header-cost').textContent()) !== costBefore)
    await expect(s.page.getByTestId('header-limit').textContent()).resolves.toContain(
      'sim:sim-small',
    )
  })

  it('a refused slider change stops showing its error once another change goes through', async () => {
    await s.page.getByTestId('nav-concurrency').click()
    await s.page.getByTestId('slider-max').fill('12')
    await until(
      async () => (await s.page.getByTestId('slider-max').getAttribute('data-applied')) === '12',
    )
    await s.page.getByTestId('slider-min').fill('32')
    const error = s.page.getByTestId('slider-min-error')
    await error.waitFor({ timeout: 10_000 })
    await expect(error.textContent()).resolves.toMatch(/max/)
    await s.page.getByTestId('slider-max').fill('40')
    await until(
      async () => (await s.page.getByTestId('slider-max').getAttribute('data-applied')) === '40',
    )
    await until(async () => (await error.count()) === 0, 5_000)
  })

  it('stopping pacer serve shows the banner; a restart with a new token says to open its URL', async () => {
    const direct = await openConsole(s.served.url)
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
    const port = Number(s.served.url.port)
    await stop(s.served.proc)
    for (const p of [s.page, direct]) {
      await p.getByTestId('connection-banner').waitFor({ timeout: 10_000 })
      expect(await connection(p)).toBe('reconnecting')
    }
    await direct.screenshot({ path: join(SHOTS, 'resilience-server-stopped.png') })

    const again = await serveConsole(s.db, ['--port', String(port)])
    restarted = again.proc
    expect(again.url.searchParams.get('token')).not.toBe(s.served.token)
    for (const p of [direct, s.page]) {
      await until(async () => (await connection(p)) === 'unauthorized', 30_000)
      await expect(p.getByTestId('connection-banner').textContent()).resolves.toContain(
        'The server restarted: open the new URL it printed',
      )
    }
    await direct.screenshot({ path: join(SHOTS, 'resilience-new-token.png') })
    await direct.close()
  })

  it('logged no page errors', () => {
    expect(s.errors).toEqual([])
  })
})
