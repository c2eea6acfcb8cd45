/**
 * What the preload gives the renderer. Optional on purpose: in a browser (`pacer serve`) there is
 * no preload, so the renderer goes through `getPacer()` (src/renderer/src/transport.ts), which
 * falls back to the HTTP client.
 */
import type { PacerApi } from '../shared/client'

declare global {
  interface Window {
    readonly pacer?: PacerApi
  }
}

export {}
