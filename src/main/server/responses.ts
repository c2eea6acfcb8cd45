/** How the HTTP server writes its answers: a `Reply` as JSON with its status, or plain text. */
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
