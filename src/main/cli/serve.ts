import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { isLoopbackHost, startHttpServer } from '../server'
import type { ControllerKind } from '../engine/pacing/controllers'
import { UsageError, dbPathFrom, openEngine } from './common'

const ROOT = resolve(__dirname, '../../..')

/** `pacer serve`: the console over loopback HTTP + SSE, with a one-time token in the URL. */
export async function serveCommand(opts: {
  db?: string
  port: number
  host?: string
  open?: boolean
  simCapacity: number
  simLatencyScale: number
  simRpm?: number
  controller?: ControllerKind
  /** false with --no-prompt-cache; true (the stored setting applies) without it. */
  promptCache?: boolean
}): Promise<number> {
  const rendererDir = join(ROOT, 'out', 'renderer')
  if (!existsSync(join(rendererDir, 'index.html'))) {
    process.stderr.write('pacer: building the console (first run)...\n')
    const built = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/electron-vite/bin/electron-vite.js'), 'build'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    )
    if (built.status !== 0)
      throw new UsageError(
        'could not build the console: run `npm run build` and look at its errors',
      )
  }
  const engine = openEngine({
    dbPath: dbPathFrom(opts.db),
    controller: opts.controller,
    promptCaching: opts.promptCache === false ? false : undefined,
    sim: {
      capacity: opts.simCapacity,
      latencyScale: opts.simLatencyScale,
      requestsPerMinute: opts.simRpm,
    },
  })
  let server: Awaited<ReturnType<typeof startHttpServer>>
  try {
    server = await startHttpServer({
      handlers: engine.handlers,
      subscribe: engine.subscribe,
      exportCsv: engine.exportCsv,
      rendererDir,
      host: opts.host ?? '127.0.0.1',
      port: opts.port,
      // Naming a loopback address explicitly keeps every loopback protection (Host checks).
      allowNonLoopback: opts.host !== undefined && !isLoopbackHost(opts.host),
    })
  } catch (err) {
    await engine.shutdown({ graceMs: 0 })
    throw new UsageError((err as Error).message)
  }
  engine.onWarning((message) => process.stderr.write(`pacer: warning: ${message}\n`))
  engine.start()
  // The URL carries the session token: print it once, on stdout, for the operator (and tests).
  process.stdout.write(`Pacer console: ${server.url}\n`)
  process.stderr.write(
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
      process.stderr.write(
        '\npacer: stopping: no new calls, in-flight calls finish (Ctrl-C again to abort them)\n',
      )
      void server
        .close()
        .then(() => engine.shutdown({ graceMs: 10_000 }))
        .catch((err: unknown) => {
          process.stderr.write(`pacer: shutdown failed: ${(err as Error).message}\n`)
          process.exitCode = 1
        })
        .then(() => resolveStop())
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  return 0
}

function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open'
  const args = process.platform === 'win32' ? ['/c', 'start', '""', url] : [url]
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true })
    child.on('error', () =>
      process.stderr.write(`pacer: could not open a browser; open ${url} yourself\n`),
    )
    child.unref()
  } catch {
    process.stderr.write(`pacer: could not open a browser; open ${url} yourself\n`)
  }
}
