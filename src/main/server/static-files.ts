/**
 * The built console's files (out/renderer) for the headless server: content types and a path
 * resolution that cannot leave the folder (no `..`, no encoded `..`, no symlink out).
 */
import { realpath, stat } from 'node:fs/promises'
import { extname, resolve, sep } from 'node:path'

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
