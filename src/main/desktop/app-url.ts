/**
 * Which URLs are the console itself: the built renderer under out/renderer (file://) or, in
 * development only, the electron-vite dev server's origin. IPC trust, navigation and the CSP header
 * all hang on this one predicate. Pure: no Electron.
 */
import { isAbsolute, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface AppUrlOptions {
  /** Absolute path of the built renderer folder (out/renderer). */
  rendererDir: string
  /** electron-vite's ELECTRON_RENDERER_URL; pass it only when the app is not packaged. */
  devServerUrl?: string
}

/** Builds the "is this the console?" predicate. */
export function createAppUrlMatcher(options: AppUrlOptions): (url: string) => boolean {
  let devOrigin: string | null = null
  if (options.devServerUrl) {
    const dev = new URL(options.devServerUrl)
    // Only a loopback http(s) dev server: a remote "dev server" would be remote code with IPC.
    if (
      (dev.protocol === 'http:' || dev.protocol === 'https:') &&
      ['localhost', '127.0.0.1', '[::1]'].includes(dev.hostname)
    ) {
      devOrigin = dev.origin
    }
  }
  return (url: string): boolean => {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return false
    }
    if (devOrigin !== null && parsed.origin === devOrigin) return true
    if (parsed.protocol !== 'file:' || (parsed.host !== '' && parsed.host !== 'localhost')) {
      return false
    }
    let path: string
    try {
      path = fileURLToPath(parsed)
    } catch {
      return false
    }
    const rel = relative(options.rendererDir, path)
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)
  }
}
