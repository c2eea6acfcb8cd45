/**
 * The store's one handle on the engine. Every command goes through `call`, so a transport that
 * throws or rejects (bridge gone, server stopped) still answers as data, like any other error,
 * and no caller has to remember a try/catch to avoid swallowing it.
 *
 * The store does not pick its transport: wire.ts provides the console's (transport.ts), a test
 * a fake, so the slices run under plain Node with no DOM.
 */
import type { PacerApi } from '../../../shared/client'
import type { Reply } from '../../../shared/contract'
import { errorReply } from '../../../shared/reply'

let source: (() => PacerApi) | null = null
let api: PacerApi | null = null

/** Where the api comes from; asked once, on first use (so a missing transport throws then). */
export function providePacer(get: () => PacerApi): void {
  source = get
  api = null
}

export function pacer(): PacerApi {
  if (api) return api
  if (!source) throw new Error('no Pacer api provided (providePacer was not called)')
  api = source()
  return api
}

export async function call<T>(invoke: (api: PacerApi) => Promise<Reply<T>>): Promise<Reply<T>> {
  try {
    return await invoke(pacer())
  } catch (err) {
    return errorReply('transport_error', err instanceof Error ? err.message : String(err))
  }
}
