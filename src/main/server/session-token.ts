/**
 * The session's bearer token: every /api route needs it, in the `Authorization: Bearer` header
 * or, where the client cannot set headers (EventSource, downloads), in `?token=`. A server bound
 * for remote use also asks it of the page's files, which the browser fetches with the cookie the
 * page's first load set.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { TOKEN_PARAM } from '../../shared/http'

/**
 * True when the request carries the token; `allowQuery` also accepts it from the URL,
 * `allowCookie` from the session cookie.
 */
export type TokenCheck = (
  req: IncomingMessage,
  url: URL,
  allowQuery: boolean,
  allowCookie?: boolean,
) => boolean

const SESSION_COOKIE = 'pacer_session'

/** The Set-Cookie value that keeps the token for the page's later requests (not readable by JS). */
export function sessionCookie(token: string): string {
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=')
    if (key === name) return rest.join('=')
  }
  return null
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/** The check for one session's token; refuses a token too short to be a secret. */
export function createTokenCheck(token: string): TokenCheck {
  if (typeof token !== 'string' || token.length < 16) {
    throw new TypeError(`token must be a string of at least 16 characters, got ${typeof token}`)
  }
  // Comparing digests keeps the comparison constant-time even when the lengths differ.
  const tokenDigest = sha256(token)
  const tokenMatches = (given: string | null | undefined): boolean =>
    typeof given === 'string' && given.length > 0 && timingSafeEqual(sha256(given), tokenDigest)

  return (req, url, allowQuery, allowCookie = false) => {
    const header = req.headers.authorization
    if (typeof header === 'string') {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      return tokenMatches(match?.[1])
    }
    if (allowQuery && tokenMatches(url.searchParams.get(TOKEN_PARAM))) return true
    return allowCookie && tokenMatches(cookieValue(req.headers.cookie, SESSION_COOKIE))
  }
}
