/** Reading a command's JSON body, with a size limit enforced before the bytes pile up. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Reply } from '../../shared/contract'
import { errorReply } from '../../shared/reply'
import { decodeUtf8, invalidUtf8Message } from '../../shared/utf8'
import { parseExactJson } from '../../shared/exact-json'

/**
 * Reads a request body up to `limit` bytes. Over the limit it answers 413 and closes the
 * connection (rather than reading hundreds of MB only to throw them away); returns null then.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<Buffer | null> {
  const tooLarge = () => {
    const body = JSON.stringify(
      errorReply('payload_too_large', `request body over ${Math.floor(limit / 1048576)} MiB`),
    )
    res.writeHead(413, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    })
    res.end(body, () => req.socket.destroy())
  }
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    tooLarge()
    return Promise.resolve(null)
  }
  return new Promise((resolveBody) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const settle = (value: Buffer | null) => {
      if (settled) return
      settled = true
      resolveBody(value)
    }
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > limit) {
        req.pause()
        tooLarge()
        settle(null)
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => settle(Buffer.concat(chunks, size)))
    // Client went away mid-upload: nobody to answer.
    req.on('error', () => settle(null))
    req.on('close', () => settle(null))
  })
}

/**
 * A body's JSON: UTF-8 checked byte by byte (a bad byte is refused with its place, never read as
 * U+FFFD), numbers kept as written (a task's payload reaches the engine as the client wrote it).
 */
export function parseJsonBody(body: Buffer): { ok: true; value: unknown } | Reply<never> {
  if (body.length === 0) return { ok: true, value: {} }
  const decoded = decodeUtf8(body)
  if (!decoded.ok) {
    const { line, byte, value } = decoded.invalid
    const message = `body is not UTF-8: line ${line}, ${invalidUtf8Message(byte, value)}`
    return errorReply('invalid_json', message)
  }
  try {
    return { ok: true, value: parseExactJson(decoded.text) }
  } catch (err) {
    return errorReply('invalid_json', `body is not JSON: ${(err as Error).message}`)
  }
}
