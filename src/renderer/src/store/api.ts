/**
 * The store's one handle on the engine. Every command goes through `call`, so a transport that
 * throws or rejects (bridge gone, server stopped) still answers as data, like any other error,
 * and no caller has to remember a try/catch to avoid swallowing it.
 */
import type { PacerApi } from '../../../shared/client'
import type { Reply } from '../../../shared/contract'
import { errorReply } from '../../../shared/reply'
import { getPacer } from '../transport'

let api: PacerApi | null = null

export function pacer(): PacerApi {
  api ??= getPacer()
  return api
}

export async function call<T>(invoke: (api: PacerApi) => Promise<Reply<T>>): Promise<Reply<T>> {
  try {
    return await invoke(pacer())
  } catch (err) {
    return errorReply('transport_error', err instanceof Error ? err.message : String(err))
  }
}
