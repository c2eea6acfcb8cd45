// Shared by the browser tests: Debian's Chromium launched the way this machine (and CI) allows,
// the console built once, and a `pacer serve` on a temp database with its command API.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { ROOT, startPacer, tempDir, until } from './cli'

export const CHROMIUM = process.env.PACER_CHROMIUM ?? '/usr/bin/chromium'

/** Headless Chromium without the background traffic this closed network refuses. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install chromium)`)
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

/** Builds the console if this checkout has no build yet (`npm test` builds it first anyway). */
export function ensureConsoleBuilt(): void {
  if (existsSync(join(ROOT, 'out/renderer/index.html'))) return
  const built = spawnSync('npx', ['electron-vite', 'build'], { cwd: ROOT, stdio: 'inherit' })
  if (built.status !== 0) throw new Error('electron-vite build failed')
}

export interface ServedConsole {
  proc: ReturnType<typeof startPacer>
  /** The URL `pacer serve` printed, token included. */
  url: URL
  token: string
  /** Calls a command over HTTP with the session token; throws the error reply. */
  api<T>(channel: string, input?: unknown): Promise<T>
}

/**
 * Starts `pacer serve` on `db` (with `env` over this process's; on any free port unless `extraArgs`
 * names one) and waits for the URL it prints.
 */
export async function serveConsole(
  db: string,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<ServedConsole> {
  const port = extraArgs.includes('--port') ? [] : ['--port', '0']
  const proc = startPacer(['serve', '--db', db, ...port, ...extraArgs], env)
  const url = new URL(
    await until(() => /Pacer console: (\S+)/.exec(proc.output().stdout)?.[1], 30_000),
  )
  const token = url.searchParams.get('token') ?? ''
  const api = async <T>(channel: string, input: unknown = {}): Promise<T> => {
    const res = await fetch(`${url.origin}/api/commands/${channel}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    })
    const reply = (await res.json()) as { ok: boolean; value?: T; error?: unknown }
    if (!reply.ok) throw new Error(`${channel}: ${JSON.stringify(reply.error)}`)
    return reply.value as T
  }
  return { proc, url, token, api }
}

/**
 * A page on the console at `url`, collecting its page errors and (unless `pageErrorsOnly`: a test
 * that cuts the network expects failed loads in the console) console errors in `errors`.
 */
export async function openConsolePage(
  browser: Browser,
  url: URL,
  errors: string[],
  options: { acceptDownloads?: boolean; pageErrorsOnly?: boolean } = {},
): Promise<Page> {
  const page = await browser.newPage({
    viewport: { width: 1440, height: 900 },
    acceptDownloads: options.acceptDownloads,
  })
  page.on('pageerror', (err) => errors.push(err.message))
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !options.pageErrorsOnly) errors.push(msg.text())
  })
  await page.goto(url.href)
  await page.getByTestId('nav-queue').waitFor()
  return page
}

/** Closes the browser and stops `pacer serve` the way Ctrl-C does. */
export async function closeConsole(
  browser: Browser | undefined,
  server: ServedConsole['proc'] | undefined,
): Promise<void> {
  await browser?.close()
  if (server) {
    server.child.kill('SIGINT')
    await server.done
  }
}

/** What a test file's console session is built from. */
export interface ConsoleSetup {
  /** The temporary folder's name: `pacer-e2e-NAME-`. */
  name: string
  /**
   * Fills the database (fixtures, earlier runs, providers) before the console starts; what it
   * returns is added to `pacer serve`'s arguments and environment.
   */
  prepare?: (db: string, dir: string) => Promise<ServeWith | void> | ServeWith | void
  /** Runs after the console and the browser closed (providers, servers). */
  teardown?: () => Promise<void> | void
  acceptDownloads?: boolean
  /** Where the page opens (a relay in front of the server). @default the URL `pacer serve` printed */
  pageUrl?: (served: ServedConsole) => Promise<URL> | URL
  /** Keep only the page's own errors, not console messages. @default false */
  pageErrorsOnly?: boolean
}

export interface ServeWith {
  args?: string[]
  env?: NodeJS.ProcessEnv
}

/** A console started for a test file: `pacer serve` on a temporary database, Chromium, one page. */
export interface ConsoleSession {
  readonly db: string
  readonly dir: string
  readonly served: ServedConsole
  readonly browser: Browser
  readonly page: Page
  /** The page's errors and console errors. */
  readonly errors: string[]
}

type Started = Omit<ConsoleSession, 'errors'>

/**
 * Registers the file's beforeAll and afterAll: the console built, the database prepared, `pacer
 * serve` started on it, Chromium on its page; closed the way Ctrl-C does. Its fields are there
 * from the first test on.
 */
export function consoleSession(setup: ConsoleSetup): ConsoleSession {
  const errors: string[] = []
  let state: Started | undefined
  let browser: Browser | undefined
  let served: ServedConsole | undefined
  beforeAll(async () => {
    ensureConsoleBuilt()
    const dir = tempDir(`pacer-e2e-${setup.name}-`)
    const db = join(dir, 'pacer.db')
    const extra = (await setup.prepare?.(db, dir)) ?? {}
    served = await serveConsole(db, extra.args, extra.env)
    browser = await launchChromium()
    const url = (await setup.pageUrl?.(served)) ?? served.url
    const page = await openConsolePage(browser, url, errors, {
      acceptDownloads: setup.acceptDownloads,
      pageErrorsOnly: setup.pageErrorsOnly,
    })
    state = { db, dir, served, browser, page }
  }, 120_000)
  afterAll(async () => {
    await closeConsole(browser, served?.proc)
    await setup.teardown?.()
  })
  const get = <K extends keyof Started>(key: K): Started[K] => {
    if (!state) throw new Error(`the console session's ${key} is used before it started`)
    return state[key]
  }
  return {
    get db() {
      return get('db')
    },
    get dir() {
      return get('dir')
    },
    get served() {
      return get('served')
    },
    get browser() {
      return get('browser')
    },
    get page() {
      return get('page')
    },
    errors,
  }
}
