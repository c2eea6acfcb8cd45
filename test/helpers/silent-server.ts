// A team store that keeps the connection and never answers (a stalled Redis, a half-open socket):
// a loopback TCP server that accepts, reads what it is sent, and never writes a byte.
import { createServer, type Socket } from 'node:net'

export interface SilentServer {
  port: number
  /** Connections accepted so far. */
  accepted(): number
  /** When each connection was accepted (Date.now()), in order. */
  acceptedAt: number[]
  /** Stops listening and drops every connection it holds. */
  close(): Promise<void>
}

export async function silentServer(): Promise<SilentServer> {
  const sockets: Socket[] = []
  const acceptedAt: number[] = []
  const server = createServer((socket) => {
    sockets.push(socket)
    acceptedAt.push(Date.now())
    socket.on('data', () => {})
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  return {
    port: (server.address() as { port: number }).port,
    accepted: () => sockets.length,
    acceptedAt,
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy())
        server.close(() => resolve())
      }),
  }
}
