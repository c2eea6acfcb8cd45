/** How the HTTP server writes its answers: a `Reply` as JSON with its status, or plain text. */
import type { ServerResponse } from 'node:http'
import type { Reply } from '../../shared/contract'

/** The HTTP status that goes with a reply: the body is the `Reply` either way. */
export function httpStatusFor(reply: Reply<unknown>): number {
  if (reply.ok) return 200
  switch (reply.error.code) {
    case 'invalid_input':
    case 'invalid_json':
    case 'use_download':
      return 400
    case 'unauthorized':
      return 401
    case 'forbidden':
      return 403
    case 'unknown_command':
    case 'not_found':
      return 404
    case 'payload_too_large':
      return 413
    case 'internal':
      return 500
    default:
      // A domain error the engine raised on purpose (e.g. key_reused_with_different_payload).
      return 422
  }
}

/** Writes a `Reply` as JSON, never cached; a 401 names the scheme the client should use. */
export function sendReply(
  res: ServerResponse,
  reply: Reply<unknown>,
  status = httpStatusFor(reply),
): void {
  const body = JSON.stringify(reply)
  res.statusCode = status
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Cache-Control', 'no-store')
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer')
  res.end(body)
}

/** A plain-text answer, for the routes outside /api (the static console). */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(text))
  res.end(text)
}
