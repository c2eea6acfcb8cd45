import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { isLoopbackHost, startHttpServer } from '../server'
import type { ControllerKind } from '../engine'
import { HTTP_PROVIDERS, describeTarget, eachEngine } from '../engine'
import { UsageError, dbPathFrom, processBaseUrls } from './common'
import { openServeEngine } from './team'
import { say } from './terminal-text'
import { targetFrom } from './otlp'
import { packageRoot } from './package-root'

const ROOT = packageRoot()

/** `pacer serve`: the console over loopback HTTP + SSE, with a one-time token in the URL. */
export async function serveCommand(opts: {
  db?: string
  port: number
  host?: string
  allowRemote?: boolean
  open?: boolean
  simCapacity: number
  simLatencyScale: number
  simRpm?: number
  controller?: ControllerKind
  provider?: string
  baseUrl?: string
  /** One provider call's deadline in seconds; the callTimeoutSeconds setting when not given. */
  timeout?: number
  /** false with --no-prompt-cache; true (the stored setting applies) without it. */
  promptCache?: boolean
  /** Team mode: the team's Redis (--store, $PACER_STORE). */
  store?: string
  /** The OTLP collector the console's batches send their spans to (else the environment's). */
  otlp?: string
  /** Prompts and answers on the spans, secrets redacted. */
  otlpContent?: boolean
}): Promise<number> {
  const host = checkHost(opts.host, opts.allowRemote === true)
  // A bad --otlp or OTEL_EXPORTER_OTLP_* is a usage error, as for `pacer run`.
  const otlp = targetFrom(opts.otlp)
  const baseUrls = processBaseUrls(opts.baseUrl, opts.provider)
  const rendererDir = join(ROOT, 'out', 'renderer')
  ensureConsoleBuilt(rendererDir)
  const engine = await openServeEngine(opts.store, {
    checkIntegrity: true,
    dbPath: dbPathFrom(opts.db),
    processBaseUrls: baseUrls,
    controller: opts.controller,
    promptCaching: opts.promptCache === false ? false : undefined,
    sim: {
      capacity: opts.simCapacity,
      latencyScale: opts.simLatencyScale,
      requestsPerMinute: opts.simRpm,
    },
    callTimeoutMs: opts.timeout === undefined ? undefined : Math.round(opts.timeout * 1000),
    otlp: { target: otlp, content: opts.otlpContent === true },
  })
  // A partition a setup failure stopped waits for the console's Resume: say so here too (also
  // from the engine reopened when this process joins its team).
  eachEngine(engine, () =>
    engine.scheduler.on('stopped', (stop) => say.err(`pacer: ${stop.reason}\n`)),
  )
  let server: Awaited<ReturnType<typeof startHttpServer>>
  try {
    server = await startHttpServer({
      handlers: engine.handlers,
      subscribe: engine.subscribe,
      exportCsv: engine.exportCsv,
      exportResults: engine.exportResults,
      rendererDir,
      host,
      port: opts.port,
      allowNonLoopback: !isLoopbackHost(host),
    })
  } catch (err) {
    await engine.shutdown({ graceMs: 0 })
    throw new UsageError((err as Error).message)
  }
  engine.onWarning((message) => say.err(`pacer: warning: ${message}\n`))
  if (!isLoopbackHost(host)) {
    say.err(
      `pacer: warning: listening on ${host}: other machines can reach the console; every ` +
        'request needs the session token in the URL below, and only Host names of the ' +
        'addresses bound are accepted\n',
    )
  }
  // Calls would be refused (and tasks fail with the same line): said once at start too.
  for (const refusal of engine.keyRefusals({ providers: HTTP_PROVIDERS })) {
    say.err(`pacer: warning: ${refusal}\n`)
  }
  if (otlp) say.err(`pacer: spans of the console's batches go to ${describeTarget(otlp)}\n`)
  engine.start()
  // The URL carries the session token: print it once, on stdout, for the operator (and tests).
  say.out(`Pacer console: ${server.url}\n`)
  say.err(
    `database: ${engine.dbPath}\nCtrl-C stops the server (in-flight calls finish, claims are released)\n`,
  )
  if (opts.open) openBrowser(server.url)

  await new Promise<void>((resolveStop) => {
    let stopping = false
    const stop = () => {
      if (stopping) {
        // Second Ctrl-C: abort in-flight calls now (they stay on the ledger as abandoned and their
        // claims are released), then finish the shutdown quickly.
        engine.abort()
        return
      }
      stopping = true
      say.err(
        '\npacer: stopping: no new calls, in-flight calls finish (Ctrl-C again to abort them)\n',
      )
      void server
        .close()
        .then(() => engine.shutdown({ graceMs: 10_000 }))
        .catch((err: unknown) => {
          say.err(`pacer: shutdown failed: ${(err as Error).message}\n`)
          process.exitCode = 1
        })
        .then(() => resolveStop())
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  return 0
}

/** The console's files (out/renderer): built on first use in a clone, shipped in a package. */
function ensureConsoleBuilt(rendererDir: string): void {
  if (!existsSync(join(rendererDir, 'index.html'))) {
    const electronVite = join(ROOT, 'node_modules/electron-vite/bin/electron-vite.js')
    // An installed package ships the built console (out/renderer) and none of the build tools.
    if (!existsSync(electronVite)) {
      throw new UsageError(
        `this installation has no built console (${rendererDir}): install a package made by \`npm pack\`, which builds it`,
      )
    }
    say.err('pacer: building the console (first run)...\n')
    const built = spawnSync(process.execPath, [electronVite, 'build'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    if (built.status !== 0)
      throw new UsageError(
        'could not build the console: run `npm run build` and look at its errors',
      )
  }
}

/** The address to listen on: loopback unless the operator allows remote access in so many words. */
function checkHost(given: string | undefined, allowRemote: boolean): string {
  if (given === undefined) return '127.0.0.1'
  const host = given.trim()
  if (host === '') {
    throw new UsageError(
      '--host "": an empty address listens on every interface; give one (127.0.0.1 is the ' +
        'default), or 0.0.0.0 with --allow-remote to be reachable from other machines',
    )
  }
  if (!isLoopbackHost(host) && !allowRemote) {
    throw new UsageError(
      `--host ${host}: not a loopback address, so other machines could reach the console; ` +
        'add --allow-remote if that is what you want',
    )
  }
  return host
}

function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open'
  const args = process.platform === 'win32' ? ['/c', 'start', '""', url] : [url]
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true })
    child.on('error', () => say.err(`pacer: could not open a browser; open ${url} yourself\n`))
    child.unref()
  } catch {
    say.err(`pacer: could not open a browser; open ${url} yourself\n`)
  }
}
