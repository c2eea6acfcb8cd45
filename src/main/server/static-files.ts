/**
 * The built console's files (out/renderer) for the headless server: content types, a path
 * resolution that cannot leave the folder (no `..`, no encoded `..`, no symlink out), and the
 * route that serves them. No token here: the console holds no data, and it needs to load before it
 * can read the token from its own URL.
 */
import { createReadStream } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { extname, resolve, sep } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { sendText } from './responses'

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
}

/** The Content-Type for a file name; unknown extensions are opaque bytes (nosniff is set too). */
export function contentTypeFor(fileName: string): string {
  return CONTENT_TYPES[extname(fileName).toLowerCase()] ?? 'application/octet-stream'
}

function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep)
}

export type StaticLookup =
  | { kind: 'file'; path: string; size: number; contentType: string }
  | { kind: 'not_found' }
  | { kind: 'bad_request' }

/**
 * Maps a URL pathname (still percent-encoded, as in `new URL(...).pathname`) to a regular file
 * under `root`. `/` is index.html. Anything that would resolve outside `root` — before or after
 * following symlinks — is `not_found`, so probing tells an attacker nothing.
 */
export async function lookupStatic(root: string, pathname: string): Promise<StaticLookup> {
  let decoded: string
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return { kind: 'bad_request' }
  }
  // NUL truncates paths in C land; backslashes are separators on Windows only, so refuse both.
  if (decoded.includes('\0') || decoded.includes('\\')) return { kind: 'bad_request' }
  const relative = decoded === '/' ? 'index.html' : decoded.replace(/^\/+/, '')
  const rootAbs = resolve(root)
  const candidate = resolve(rootAbs, relative)
  if (!isInside(rootAbs, candidate) || candidate === rootAbs) return { kind: 'not_found' }
  try {
    const [realRoot, realFile] = await Promise.all([realpath(rootAbs), realpath(candidate)])
    if (!isInside(realRoot, realFile)) return { kind: 'not_found' }
    const info = await stat(realFile)
    if (!info.isFile()) return { kind: 'not_found' }
    return { kind: 'file', path: realFile, size: info.size, contentType: contentTypeFor(realFile) }
  } catch {
    return { kind: 'not_found' }
  }
}

export interface StaticSite {
  /** The built console (electron-vite's out/renderer). */
  rendererDir: string
  /** Served as /favicon.ico when rendererDir has none; without it that answers 204. */
  faviconPath?: string | undefined
}

async function fileSize(path: string): Promise<number | null> {
  try {
    const info = await stat(path)
    return info.isFile() ? info.size : null
  } catch {
    return null
  }
}

/** Answers GET and HEAD for the console's files; anything else is 405. */
export async function serveStatic(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  site: StaticSite,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD')
    return sendText(res, 405, 'method not allowed')
  }
  let found = await lookupStatic(site.rendererDir, url.pathname)
  if (found.kind === 'not_found' && url.pathname === '/favicon.ico') {
    // Browsers ask for it on their own; a 404 would show up as a console error in every test.
    const size = site.faviconPath ? await fileSize(site.faviconPath) : null
    if (site.faviconPath && size !== null) {
      const contentType = contentTypeFor(site.faviconPath)
      found = { kind: 'file', path: site.faviconPath, size, contentType }
    } else {
      res.statusCode = 204
      res.end()
      return
    }
  }
  if (found.kind === 'bad_request') return sendText(res, 400, 'bad path')
  if (found.kind === 'not_found') return sendText(res, 404, 'not found')
  res.statusCode = 200
  res.setHeader('Content-Type', found.contentType)
  res.setHeader('Content-Length', found.size)
  // The first page load carries the session token in its URL: keep it out of the disk cache.
  res.setHeader('Cache-Control', 'no-store')
  if (req.method === 'HEAD') {
    res.end()
    return
  }
  try {
    await pipeline(createReadStream(found.path), res)
  } catch (err) {
    // The client went away mid-file (a reload, a closed tab): nothing to answer or log.
    if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err
  }
}
