// A real redis-server for team mode's tests: Debian's binary on a free loopback port in a temp
// folder, stopped and started again at will (fault tests). Nothing is mocked and nothing skipped:
// CI installs redis-server (.ci/run).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { until } from './until'

export interface RedisServer {
  readonly port: number
  /** redis://127.0.0.1:PORT/0 */
  readonly url: string
  readonly dir: string
  /** Stops the server (SIGTERM, or SIGKILL) and waits for its exit. */
  stop(signal?: NodeJS.Signals): Promise<void>
  /** Starts it again on the same port and folder; with persistence it reloads its data. */
  start(): Promise<void>
  /** Sends a signal and returns at once: SIGSTOP stalls it (connections kept, no answer), SIGCONT resumes. */
  signal(signal: NodeJS.Signals): void
  /** Stops it and removes its folder. */
  close(): Promise<void>
}

export interface RedisServerOptions {
  /** Append-only file in the folder, so a restart keeps the data. @default false */
  persist?: boolean
  /** requirepass. */
  password?: string
}

/** A port nobody listens on now (the kernel's pick). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Sends PING over a plain socket; true on +PONG (or a NOAUTH refusal: it is up). */
export async function answersPing(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (d) => done(/^(\+PONG|-NOAUTH)/.test(d.toString('utf8'))))
  })
}

/** Starts redis-server on a free loopback port and waits until it answers PING. */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'pacer-redis-'))
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '']
  args.push('--appendonly', options.persist ? 'yes' : 'no', '--appendfsync', 'always')
  if (options.password) args.push('--requirepass', options.password)
  let child: ChildProcess | null = null
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    dir,
    async start() {
      if (child) return
      const c = spawn('/usr/bin/redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] })
      let stderr = ''
      c.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')))
      child = c
      c.on('exit', () => {
        if (child === c) child = null
      })
      await until(
        async () => {
          if (c.exitCode !== null) throw new Error(`redis-server exited: ${stderr}`)
          return answersPing(port)
        },
        20_000,
        20,
      )
    },
    async stop(signal = 'SIGTERM') {
      const c = child
      if (!c) return
      const exited = new Promise<void>((r) => c.once('exit', () => r()))
      c.kill(signal)
      await exited
      child = null
    },
    signal(signal) {
      child?.kill(signal)
    },
    async close() {
      // A stopped server would not die of SIGKILL any later, but would hold nothing either: go on.
      child?.kill('SIGCONT')
      await server.stop('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await server.start()
  return server
}
