// `pacer provider-batches`: the submissions this database sent to the vendors' batch APIs, with
// their remote state, counts and waiting time; `cancel ID` asks the vendor to stop one (what
// finished is kept, and delivered and priced by the run that polls it).
import { ENV_NAMES, type Engine } from '../engine'
import { UsageError, dbPathFrom, openEngine } from './common'
import { batchLine } from './batch-api'
import { EXIT } from './exit-codes'
import { say } from './terminal-text'

/** Where each vendor's own key may go without a --base-url naming the server. */
const OFFICIAL: Record<string, string> = {
  openai: 'https://api.openai.com',
  anthropic: 'https://api.anthropic.com',
}

function open(db: string | undefined): Engine {
  return openEngine({ dbPath: dbPathFrom(db), batchApi: true, batchIds: [] })
}

/** Lists the submissions, newest first. */
export async function providerBatchesCommand(opts: {
  db?: string
  json?: boolean
}): Promise<number> {
  const engine = open(opts.db)
  try {
    const list = engine.batchApi!.list()
    if (opts.json) {
      say.out(`${JSON.stringify(list)}\n`)
    } else if (list.length === 0) {
      say.out('no provider batches in this database (pacer run FILE --batch-api sends some)\n')
    } else {
      for (const v of list) say.out(`${batchLine(v)}\n`)
    }
    return EXIT.done
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}

/**
 * The key headers for a submission's endpoint: the vendor's key from the environment, sent only
 * to the vendor's own server or to the --base-url given here (as `pacer run` sends it).
 */
function keyHeaders(
  vendor: string,
  endpoint: string,
  baseUrl: string | undefined,
): Record<string, string> {
  const provider = vendor === 'anthropic' ? 'anthropic' : 'openai'
  const allowed = [OFFICIAL[provider]!, ...(baseUrl ? [baseUrl] : [])].map((u) => new URL(u).origin)
  if (!allowed.includes(new URL(endpoint).origin)) {
    throw new UsageError(
      `the batch was sent to ${new URL(endpoint).origin}: give --base-url with that server to send the key there`,
    )
  }
  const names = ENV_NAMES[provider]!
  const key = process.env[names.key]
  if (!key) throw new UsageError(`set ${names.key} to cancel a ${provider} batch`)
  return provider === 'anthropic'
    ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' }
    : { authorization: `Bearer ${key}` }
}

/** Cancels one submission at the vendor: by Pacer's number or the vendor's batch id. */
export async function cancelProviderBatchCommand(
  id: string,
  opts: { db?: string; baseUrl?: string },
): Promise<number> {
  const engine = open(opts.db)
  try {
    const api = engine.batchApi!
    const s = api.list(1_000_000).find((v) => String(v.id) === id || v.remoteId === id)
    if (!s)
      throw new UsageError(`no provider batch ${id} in this database (see pacer provider-batches)`)
    const endpoint = api.journal.submission(s.id)!.endpoint
    let view
    try {
      view = await api.cancel(id, keyHeaders(s.vendor, endpoint, opts.baseUrl))
    } catch (err) {
      if (err instanceof RangeError) throw new UsageError(err.message)
      throw err
    }
    say.out(`${batchLine(view)}\n`)
    say.err(
      'pacer: cancel asked: requests already done are kept; the run polling it (or the same pacer run again) collects and prices them\n',
    )
    return EXIT.done
  } finally {
    await engine.shutdown({ graceMs: 0 })
  }
}
